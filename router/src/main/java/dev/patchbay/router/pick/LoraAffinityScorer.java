package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.List;
import java.util.Set;

/**
 * The gateway's activity-based LoRA scorer ({@code lora-affinity-scorer}), kept as a peer to compare against. It
 * reads only the legacy {@code vllm:lora_requests_info} sets: 1.0 where the adapter has requests in flight, else 0.8
 * while the server has room for another adapter, else 0.6 where it waits, else 0. A base-model request is scored the
 * same way (its name is on no list), as the gateway does.
 *
 * <p>Room is counted as llm-d's released picker counts it (v0.9.2): the running list's length plus the waiting
 * list's below {@code max_lora}, so an adapter with requests both running and waiting counts twice and a server looks
 * full early. {@code distinctAdapters} counts each adapter once, the rule llm-d-router PR #2625 describes.
 */
public final class LoraAffinityScorer implements Scorer {
    public static final String NAME = "lora-affinity";
    public static final double ACTIVE = 1.0;
    public static final double HAS_CAPACITY = 0.8;
    public static final double WAITING = 0.6;
    public static final double NONE = 0.0;

    private final boolean distinctAdapters;

    public LoraAffinityScorer(boolean distinctAdapters) {
        this.distinctAdapters = distinctAdapters;
    }

    /** As llm-d's released picker scores. */
    public LoraAffinityScorer() {
        this(false);
    }

    public boolean distinctAdapters() {
        return distinctAdapters;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        double[] scores = new double[candidates.size()];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = score(candidates.get(i).metrics(), request.model(), distinctAdapters);
        }
        return scores;
    }

    static double score(EndpointMetrics m, String adapter, boolean distinctAdapters) {
        if (m.activeAdapters().contains(adapter)) {
            return ACTIVE;
        }
        int inFlight = distinctAdapters
                ? distinct(m.activeAdapters(), m.waitingAdapters())
                : m.activeAdapters().size() + m.waitingAdapters().size();
        if (inFlight < m.maxLora()) {
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
