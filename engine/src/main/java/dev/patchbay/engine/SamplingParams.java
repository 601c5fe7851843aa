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
 * @param logprobs      most likely tokens to report beside each sampled token's log probability, or null for none
 * @param promptLogprobs the same for each prompt token after the first, or null for none
 */
public record SamplingParams(
        int maxTokens,
        double temperature,
        double topP,
        int topK,
        Long seed,
        List<String> stop,
        List<Integer> stopTokenIds,
        boolean ignoreEos,
        int n,
        Integer logprobs,
        Integer promptLogprobs) {
    public SamplingParams {
        if (logprobs != null && logprobs < 0)
            throw new IllegalArgumentException("logprobs must be >= 0, got " + logprobs);
        if (promptLogprobs != null && promptLogprobs < 0) {
            throw new IllegalArgumentException("prompt_logprobs must be >= 0, got " + promptLogprobs);
        }
        if (maxTokens < 1) throw new IllegalArgumentException("max_tokens must be at least 1, got " + maxTokens);
        if (temperature < 0) throw new IllegalArgumentException("temperature must be >= 0, got " + temperature);
        if (!(topP > 0 && topP <= 1)) throw new IllegalArgumentException("top_p must be in (0, 1], got " + topP);
        if (n < 1) throw new IllegalArgumentException("n must be at least 1, got " + n);
        stop = stop == null ? List.of() : List.copyOf(stop);
        stopTokenIds = stopTokenIds == null ? List.of() : List.copyOf(stopTokenIds);
    }

    public SamplingParams(
            int maxTokens,
            double temperature,
            double topP,
            int topK,
            Long seed,
            List<String> stop,
            List<Integer> stopTokenIds,
            boolean ignoreEos,
            int n) {
        this(maxTokens, temperature, topP, topK, seed, stop, stopTokenIds, ignoreEos, n, null, null);
    }

    public static SamplingParams greedy(int maxTokens) {
        return new SamplingParams(maxTokens, 0, 1, -1, null, List.of(), List.of(), false, 1);
    }

    /** Exactly {@code tokens} output tokens: the benchmark's way to fix output lengths. */
    public static SamplingParams fixedLength(int tokens) {
        return new SamplingParams(tokens, 1, 1, -1, null, List.of(), List.of(), true, 1);
    }

    public SamplingParams withMaxTokens(int max) {
        return new SamplingParams(
                max, temperature, topP, topK, seed, stop, stopTokenIds, ignoreEos, n, logprobs, promptLogprobs);
    }

    /** The same parameters asking for log probabilities (null: none) of sampled and of prompt tokens. */
    public SamplingParams withLogprobs(Integer sample, Integer prompt) {
        return new SamplingParams(
                maxTokens, temperature, topP, topK, seed, stop, stopTokenIds, ignoreEos, n, sample, prompt);
    }
}
