package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.EndpointMetrics;

import java.util.List;

/**
 * The Gateway API Inference Extension's activity-based LoRA scorer, kept for comparison. It reads
 * only the legacy {@code vllm:lora_requests_info} sets, as the gateway does.
 */
public final class LoraAffinityScorer implements Scorer {
    public static final String NAME = "lora-affinity";
    public static final double ACTIVE = 1.0;
    public static final double HAS_CAPACITY = 0.8;
    public static final double WAITING = 0.6;
    public static final double NONE = 0.0;
    /** Every endpoint gets this for a base-model request. */
    public static final double NEUTRAL = 0.0;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        double[] scores = new double[candidates.size()];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = request.baseModel() ? NEUTRAL : score(candidates.get(i).metrics(), request.model());
        }
        return scores;
    }

    static double score(EndpointMetrics m, String adapter) {
        if (m.activeAdapters().contains(adapter)) {
            return ACTIVE;
        }
        // The gateway sums the two set sizes, so an adapter in both counts twice; so do we.
        if (m.activeAdapters().size() + m.waitingAdapters().size() < m.maxLora()) {
            return HAS_CAPACITY;
        }
        if (m.waitingAdapters().contains(adapter)) {
            return WAITING;
        }
        return NONE;
    }
}
