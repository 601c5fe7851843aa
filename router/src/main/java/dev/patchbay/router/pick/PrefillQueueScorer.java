package dev.patchbay.router.pick;

import java.util.List;

/**
 * 1 - (T - minT) / max(maxT - minT, minSpread) over the candidates' prompt tokens in flight
 * ({@link EndpointState#promptTokensInFlight}); 1 when all are equal.
 *
 * <p>Why: a server runs a step's prefills before any request that arrives during that step gets its first token, so
 * a long prompt (or a burst of them) sent to one server delays every request sent there next. Below saturation this
 * is what makes the TTFT tail, and no scraped metric shows it: queues are empty and the prompt already counts as
 * running. The router knows what it sent, so it keeps the tally itself and spreads prefill work.
 * {@code minSpread} keeps a few tokens of difference from outweighing the other scorers.
 */
public final class PrefillQueueScorer implements Scorer {
    public static final String NAME = "prefill-queue";
    /** About five mean ShareGPT prompts, or 100 ms of prefill for an 8B model on one modern GPU. */
    public static final long DEFAULT_MIN_SPREAD_TOKENS = 1000;

    private final long minSpread;

    public PrefillQueueScorer(long minSpreadTokens) {
        if (minSpreadTokens < 1) {
            throw new IllegalArgumentException("minSpreadTokens must be >= 1, got " + minSpreadTokens);
        }
        this.minSpread = minSpreadTokens;
    }

    public PrefillQueueScorer() {
        this(DEFAULT_MIN_SPREAD_TOKENS);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (EndpointState state : candidates) {
            min = Math.min(min, state.promptTokensInFlight());
            max = Math.max(max, state.promptTokensInFlight());
        }
        double spread = Math.max(max - min, minSpread);
        double[] scores = new double[candidates.size()];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = 1.0 - (candidates.get(i).promptTokensInFlight() - min) / spread;
        }
        return scores;
    }
}
