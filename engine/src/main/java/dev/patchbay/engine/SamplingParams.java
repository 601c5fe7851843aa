package dev.patchbay.engine;

import java.util.List;

/**
 * How to pick tokens and when to stop, as the OpenAI API (and vLLM) define them.
 *
 * @param maxTokens     tokens to generate at most; the engine also stops at max_model_len
 * @param temperature   0 means greedy
 * @param topP          nucleus sampling mass in (0, 1]
 * @param topK          -1 or 0 disables
 * @param seed          per-request seed, or null for the engine's seeded stream
 * @param stop          stop strings; the matched string is not returned
 * @param stopTokenIds  extra token ids that end generation
 * @param ignoreEos     keep generating past the end-of-sequence token
 * @param n             requested choices (recorded for {@code vllm:request_params_n})
 */
public record SamplingParams(int maxTokens, double temperature, double topP, int topK, Long seed,
                             List<String> stop, List<Integer> stopTokenIds, boolean ignoreEos, int n) {
    public SamplingParams {
        if (maxTokens < 1) throw new IllegalArgumentException("max_tokens must be at least 1, got " + maxTokens);
        if (temperature < 0) throw new IllegalArgumentException("temperature must be >= 0, got " + temperature);
        if (!(topP > 0 && topP <= 1)) throw new IllegalArgumentException("top_p must be in (0, 1], got " + topP);
        if (n < 1) throw new IllegalArgumentException("n must be at least 1, got " + n);
        stop = stop == null ? List.of() : List.copyOf(stop);
        stopTokenIds = stopTokenIds == null ? List.of() : List.copyOf(stopTokenIds);
    }

    public static SamplingParams greedy(int maxTokens) {
        return new SamplingParams(maxTokens, 0, 1, -1, null, List.of(), List.of(), false, 1);
    }

    /** Exactly {@code tokens} output tokens: the benchmark's way to fix output lengths. */
    public static SamplingParams fixedLength(int tokens) {
        return new SamplingParams(tokens, 1, 1, -1, null, List.of(), List.of(), true, 1);
    }

    public SamplingParams withMaxTokens(int max) {
        return new SamplingParams(max, temperature, topP, topK, seed, stop, stopTokenIds, ignoreEos, n);
    }
}
