package dev.patchbay.engine.exec;

/**
 * The log probabilities at one position of a sequence: the chosen token's (the sampled one, or the prompt's own
 * token) and the most likely tokens', as vLLM's {@code raw_logprobs} mode reports them (log-softmax of the logits
 * the sampler saw, before temperature, top-k and top-p).
 *
 * @param tokenId      the chosen token
 * @param logprob      its log probability
 * @param rank         its rank in the vocabulary, 1 for the most likely (ties share the lower rank, as in vLLM)
 * @param topIds       the most likely tokens, most likely first
 * @param topLogprobs  their log probabilities, descending
 */
public record TokenLogprobs(int tokenId, float logprob, int rank, int[] topIds, float[] topLogprobs) {
    public TokenLogprobs {
        if (topIds.length != topLogprobs.length)
            throw new IllegalArgumentException("top ids and logprobs differ in length");
    }

    public int numTop() {
        return topIds.length;
    }
}
