package dev.patchbay.router.pick;

/** The min-max scoring the load scorers share: the lowest value scores 1, a spread of values scores down to 0. */
final class SpreadScores {
    private SpreadScores() {}

    /**
     * 1 - (v - min) / max(max - min, minSpread) for each value; 1 for all when they are equal. A {@code minSpread}
     * above 0 keeps small differences small: with 0, any difference spans the whole range.
     */
    static double[] lowerIsBetter(long[] values, long minSpread) {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (long value : values) {
            min = Math.min(min, value);
            max = Math.max(max, value);
        }
        long spread = Math.max(max - min, minSpread);
        double[] scores = new double[values.length];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = spread == 0 ? 1.0 : 1.0 - (double) (values[i] - min) / spread;
        }
        return scores;
    }
}
