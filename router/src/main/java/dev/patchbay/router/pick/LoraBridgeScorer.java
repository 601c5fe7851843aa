package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.AdapterIds;
import java.util.Arrays;
import java.util.List;

/**
 * For a request whose adapter is not in a slot on a candidate, prefers candidates outside the group of endpoints its
 * holders already share traffic with: a new copy there joins two groups, one more where the group already reaches adds
 * nothing. Endpoints form a group when they hold a common adapter in a slot, directly or through others (the
 * connected components of endpoints and slot adapters). Traffic moves only inside a group: a group whose adapters
 * carry more than its endpoints can serve stays overloaded while the rest of the pool has room, and no scorer that
 * looks at one endpoint at a time sees it.
 *
 * <p>Such an island forms when two hot adapters' first requests reach the same empty endpoints within one scrape
 * interval (docs/lab/2026-12-02-patchbay-profile-tuning.md). A holder and an endpoint in another group score 1, an endpoint in the holders' group 0; when no endpoint
 * is outside the holders' group, without a holder (the adapter's first copy), or for a base-model request, every
 * endpoint scores 1.
 */
public final class LoraBridgeScorer implements Scorer {
    public static final String NAME = "lora-bridge";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        int n = candidates.size();
        double[] scores = new double[n];
        Arrays.fill(scores, 1.0);
        if (request.baseModel() || n < 2) {
            return scores;
        }
        int[] parent = new int[n];
        for (int i = 0; i < n; i++) {
            parent[i] = i;
        }
        // Adapters as small ints (the pool's AdapterIds, assigned at scrape time): a pick here is array work.
        AdapterIds table = candidates.getFirst().metrics().placements().table();
        for (EndpointState c : candidates) {
            if (c.metrics().placements().table() != table) {
                throw new IllegalArgumentException("candidates from different endpoint pools (adapter id tables)");
            }
        }
        int wanted = table.find(request.model());
        if (wanted < 0) {
            return scores; // no scrape has named it: no endpoint holds it
        }
        int[] firstHolder = new int[Math.max(table.bound(), wanted + 1)];
        Arrays.fill(firstHolder, -1);
        boolean[] holds = new boolean[n];
        for (int i = 0; i < n; i++) {
            for (int adapter : candidates.get(i).metrics().slotAdapters().ids()) {
                if (adapter >= firstHolder.length) {
                    continue; // named by a scrape that finished after this pick began; not a holder of anything yet
                }
                holds[i] |= adapter == wanted;
                if (firstHolder[adapter] < 0) {
                    firstHolder[adapter] = i;
                } else {
                    union(parent, firstHolder[adapter], i);
                }
            }
        }
        if (firstHolder[wanted] < 0) {
            return scores; // the adapter's first copy
        }
        int holdersGroup = find(parent, firstHolder[wanted]);
        boolean bridgeExists = false;
        for (int i = 0; i < n && !bridgeExists; i++) {
            bridgeExists = !holds[i] && find(parent, i) != holdersGroup;
        }
        if (!bridgeExists) {
            return scores; // one group already: no copy joins anything, so no preference
        }
        for (int i = 0; i < n; i++) {
            if (!holds[i] && find(parent, i) == holdersGroup) {
                scores[i] = 0.0;
            }
        }
        return scores;
    }

    private static int find(int[] parent, int i) {
        while (parent[i] != i) {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        return i;
    }

    private static void union(int[] parent, int a, int b) {
        parent[find(parent, a)] = find(parent, b);
    }
}
