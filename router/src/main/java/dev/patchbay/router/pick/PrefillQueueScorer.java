package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.LoraPlacement;
import java.util.List;

/**
 * 1 - (T - minT) / max(maxT - minT, minSpread) over the candidates' prompt tokens in flight
 * ({@link EndpointState#promptTokensInFlight}), 1 when all are equal; for an adapter request, candidates where the
 * adapter is not placed best ({@link LoraPlacement}) then score 0 (the range still spans every candidate).
 *
 * <p>Why: a server runs a step's prefills before any request that arrives during that step gets its first token, so
 * a long prompt (or a burst of them) sent to one server delays every request sent there next. Below saturation this
 * is what makes the TTFT tail, and vLLM's page does not show it: queues are empty and the prompt already counts as
 * running. The router knows what it sent, so it keeps the tally itself and spreads prefill work; a server that serves
 * {@code vllm:num_tokens_waiting} (Patchbay) also shows the other routers' prompts.
 *
 * <p>Only among the best-placed endpoints, because prefill work passes in a step or two and an adapter load or a
 * wait for a slot does not: scoring every endpoint let this scorer send requests to a free slot instead of the host
 * copy of their adapter, which cost loads and placement (docs/lab/2026-12-02-patchbay-profile-tuning.md). {@code minSpread} keeps a few tokens of difference from outweighing the other
 * scorers.
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

    public long minSpreadTokens() {
        return minSpread;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        long[] tokens = new long[candidates.size()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = candidates.get(i).promptTokensInFlight();
        }
        double[] scores = SpreadScores.lowerIsBetter(tokens, minSpread);
        if (!request.baseModel()) {
            LoraPlacement[] placements = placements(request.model(), candidates);
            LoraPlacement best = best(placements);
            for (int i = 0; i < scores.length; i++) {
                if (placements[i] != best) {
                    scores[i] = 0.0;
                }
            }
        }
        return scores;
    }

    private static LoraPlacement[] placements(String adapter, List<EndpointState> candidates) {
        LoraPlacement[] placements = new LoraPlacement[candidates.size()];
        for (int i = 0; i < placements.length; i++) {
            placements[i] = LoraPlacement.of(candidates.get(i).metrics(), adapter);
        }
        return placements;
    }

    /** The enum lists placements best first. */
    private static LoraPlacement best(LoraPlacement[] placements) {
        LoraPlacement best = LoraPlacement.ALL_SLOTS_BUSY;
        for (LoraPlacement placement : placements) {
            if (placement.compareTo(best) < 0) {
                best = placement;
            }
        }
        return best;
    }
}
