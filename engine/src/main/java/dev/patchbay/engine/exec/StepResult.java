package dev.patchbay.engine.exec;

/**
 * The outcome of one step.
 *
 * @param nextTokens    for each sequence of the batch, in order, the sampled token (or -1 where no sample was wanted)
 * @param modeledNanos  how long the step takes on the modeled hardware; 0 when the executor did the work for real
 */
public record StepResult(int[] nextTokens, long modeledNanos) {}
