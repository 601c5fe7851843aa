package dev.patchbay.router.pick;

import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/** Highest total score first; ties broken at random (shuffle, then a stable sort). */
public final class MaxScorePicker implements Picker {
    public static final String NAME = "max-score";

    private final RandomGenerator random;

    /** {@code random} must be thread-safe if the picker is shared (java.util.Random is). */
    public MaxScorePicker(RandomGenerator random) {
        this.random = random;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<EndpointState> rank(List<EndpointState> candidates, double[] totalScores) {
        int n = candidates.size();
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int swap = order[i];
            order[i] = order[j];
            order[j] = swap;
        }
        sortByScoreDescending(order, new int[n], 0, n, totalScores);
        List<EndpointState> ranked = new ArrayList<>(n);
        for (int i : order) {
            ranked.add(candidates.get(i));
        }
        return ranked;
    }

    /** Stable merge sort of indices by descending score; primitive, so picking stays cheap at 100+ endpoints. */
    private static void sortByScoreDescending(int[] order, int[] scratch, int from, int to, double[] scores) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        sortByScoreDescending(order, scratch, from, mid, scores);
        sortByScoreDescending(order, scratch, mid, to, scores);
        if (scores[order[mid - 1]] >= scores[order[mid]]) {
            return;
        }
        System.arraycopy(order, from, scratch, from, to - from);
        int left = from;
        int right = mid;
        for (int k = from; k < to; k++) {
            if (right >= to || (left < mid && scores[scratch[left]] >= scores[scratch[right]])) {
                order[k] = scratch[left++];
            } else {
                order[k] = scratch[right++];
            }
        }
    }
}
