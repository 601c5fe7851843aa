package dev.patchbay.engine.stats;

import java.util.List;

/**
 * What happened in the step that produced a snapshot (empty for snapshots published between steps).
 *
 * @param scheduledTokens   tokens processed in the step ({@code vllm:iteration_tokens_total})
 * @param numAdapters       distinct adapters in the batch ({@code vllm:iteration_lora_adapters}); -1 if no batch ran
 * @param firstTokens       time to first token of each request that got its first token
 * @param interTokenSeconds gap since the previous token, for each request that got a later token
 * @param finished          requests that finished
 * @param loads             adapters brought into a tier
 */
public record StepStats(
        boolean ranBatch,
        int scheduledTokens,
        int numAdapters,
        List<FirstToken> firstTokens,
        List<Double> interTokenSeconds,
        List<FinishedRequest> finished,
        List<AdapterLoad> loads) {

    public static final StepStats EMPTY = new StepStats(false, 0, -1, List.of(), List.of(), List.of(), List.of());

    /** A request's first token; {@code adapter} is null for the base model. */
    public record FirstToken(String adapter, double ttftSeconds) {}

    public boolean isEmpty() {
        return !ranBatch && finished.isEmpty() && loads.isEmpty();
    }
}
