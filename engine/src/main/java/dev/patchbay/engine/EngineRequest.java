package dev.patchbay.engine;

/**
 * A generation request as the API hands it to the engine.
 *
 * @param promptTokens  the tokenized prompt
 * @param adapterName   the adapter to apply, or null for the base model
 * @param arrivalNanos  engine-clock time the API received the request (TTFT and e2e start here)
 */
public record EngineRequest(
        int[] promptTokens, String adapterName, SamplingParams params, long arrivalNanos, RequestListener listener) {}
