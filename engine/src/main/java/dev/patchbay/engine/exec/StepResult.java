package dev.patchbay.engine.exec;

/**
 * The outcome of one step.
 *
 * @param nextTokens      for each sequence of the batch, in order, the sampled token (or -1 where no sample was wanted)
 * @param modeledNanos    how long the step takes on the modeled hardware; 0 when the executor did the work for real
 * @param sampleLogprobs  for each sequence, the sampled token's log probabilities where its parameters ask for
 *                        {@code logprobs} (else null); null as a whole when no sequence asked
 * @param promptLogprobs  for each sequence whose parameters ask for {@code prompt_logprobs}, entry j is the prompt
 *                        token at position {@code startPosition + 1 + j}, for every such prompt position this step's
 *                        tokens predict (else null); null as a whole when no sequence asked
 */
public record StepResult(
        int[] nextTokens, long modeledNanos, TokenLogprobs[] sampleLogprobs, TokenLogprobs[][] promptLogprobs) {
    public StepResult(int[] nextTokens, long modeledNanos) {
        this(nextTokens, modeledNanos, null, null);
    }

    public TokenLogprobs sampleLogprobs(int sequence) {
        return sampleLogprobs == null ? null : sampleLogprobs[sequence];
    }

    public TokenLogprobs[] promptLogprobs(int sequence) {
        return promptLogprobs == null ? null : promptLogprobs[sequence];
    }

    /**
     * Positions of the prompt whose next-token distribution a sequence's step computes: those from its
     * {@code startPosition} that still have a prompt token after them. Entry j of {@link #promptLogprobs} is the
     * prompt token at {@code startPosition + 1 + j}.
     */
    public static int promptPositions(ScheduledSequence s) {
        int end = Math.min(s.startPosition() + s.tokens().length, s.prompt().length - 1);
        return Math.max(0, end - s.startPosition());
    }
}
