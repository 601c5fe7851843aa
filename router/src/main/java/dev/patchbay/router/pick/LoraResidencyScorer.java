package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.LoraPlacement;
import java.util.List;

/** Patchbay's LoRA scorer: prefers the endpoint that can start the adapter soonest. */
public final class LoraResidencyScorer implements Scorer {
    public static final String NAME = "lora-residency";
    /** Every endpoint gets this for a base-model request. */
    public static final double NEUTRAL = 0.0;

    private final ResidencyScores scores;

    public LoraResidencyScorer(ResidencyScores scores) {
        this.scores = scores;
    }

    public LoraResidencyScorer() {
        this(ResidencyScores.DEFAULT);
    }

    public ResidencyScores scores() {
        return scores;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        double[] result = new double[candidates.size()];
        for (int i = 0; i < result.length; i++) {
            result[i] = request.baseModel()
                    ? NEUTRAL
                    : scores.of(LoraPlacement.of(candidates.get(i).metrics(), request.model()));
        }
        return result;
    }
}
