package dev.patchbay.engine.stats;

import dev.patchbay.engine.FinishReason;

/**
 * Timing and size of a request that finished during a step, with vLLM's interval semantics:
 * queue = queued in engine to first scheduled; prefill = first scheduled to first token; decode = first to
 * last token; inference = first scheduled to last token; TTFT and e2e from when the API received it.
 * Intervals a request never reached are {@code NaN}.
 */
public record FinishedRequest(
        String adapter,
        FinishReason reason,
        int promptTokens,
        int generationTokens,
        int maxTokensParam,
        int n,
        double e2eSeconds,
        double queueSeconds,
        double prefillSeconds,
        double decodeSeconds,
        double inferenceSeconds,
        double meanTimePerOutputTokenSeconds) {}
