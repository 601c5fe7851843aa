package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.List;
import java.util.Set;

/**
 * The gateway's activity-based LoRA scorer ({@code lora-affinity-scorer} as of llm-d-router PR #2625), kept as a peer
 * to compare against. It reads only the legacy {@code vllm:lora_requests_info} sets: 1.0 where the adapter has
 * requests in flight, else 0.8 while fewer distinct adapters than {@code max_lora} are in flight, else 0.6 where it
 * waits, else 0. A base-model request is scored the same way (its name is on no list), as the gateway does.
 */
public final class LoraAffinityScorer implements Scorer {
    public static final String NAME = "lora-affinity";
    public static final double ACTIVE = 1.0;
    public static final double HAS_CAPACITY = 0.8;
    public static final double WAITING = 0.6;
    public static final double NONE = 0.0;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        double[] scores = new double[candidates.size()];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = score(candidates.get(i).metrics(), request.model());
        }
        return scores;
    }

    static double score(EndpointMetrics m, String adapter) {
        if (m.activeAdapters().contains(adapter)) {
            return ACTIVE;
        }
        // Distinct adapters in flight: vLLM writes the same names into both labels, so a sum would count each twice.
        if (distinct(m.activeAdapters(), m.waitingAdapters()) < m.maxLora()) {
            return HAS_CAPACITY;
        }
        if (m.waitingAdapters().contains(adapter)) {
            return WAITING;
        }
        return NONE;
    }

    private static int distinct(Set<String> active, Set<String> waiting) {
        int n = active.size();
        for (String w : waiting) if (!active.contains(w)) n++;
        return n;
    }
}
