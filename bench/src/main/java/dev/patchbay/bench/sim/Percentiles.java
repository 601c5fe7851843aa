package dev.patchbay.bench.sim;

import java.util.Arrays;

/** Nearest-rank percentiles of a sample: the simulator's, and the real-process benchmarks'. */
public final class Percentiles {
    private final double[] sorted;

    Percentiles(double[] values, int count) {
        sorted = Arrays.copyOf(values, count);
        Arrays.sort(sorted);
    }

    /** The p-th percentile (0 < p <= 100), NaN for an empty sample. */
    double at(double p) {
        return nearestRank(sorted, p);
    }

    /**
     * The p-th percentile (0 < p <= 100) of a sorted sample by nearest rank: the value at rank ceil(p/100 * n);
     * NaN for an empty sample.
     */
    public static double nearestRank(double[] sorted, double p) {
        if (sorted.length == 0) return Double.NaN;
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.clamp(rank - 1, 0, sorted.length - 1)];
    }
}
