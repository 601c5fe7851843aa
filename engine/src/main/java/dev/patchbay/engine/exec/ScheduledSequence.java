package dev.patchbay.engine.exec;

import dev.patchbay.engine.SamplingParams;
import java.util.random.RandomGenerator;

/**
 * One sequence's share of a step.
 *
 * @param requestId      the engine's request id
 * @param tokens         the token ids to process this step (a prompt chunk, or the last sampled token)
 * @param startPosition  position of {@code tokens[0]} in the sequence
 * @param blockTable     KV block ids holding positions 0.. (block_size tokens each); read-only, valid for this step
 * @param adapterSlot    batch slot of the sequence's adapter, or -1 for the base model
 * @param sample         whether a next token is wanted (false for a prompt chunk that is not the last)
 * @param params         sampling parameters
 * @param rng            the request's own random stream, so sampling is reproducible per request
 * @param prompt         the whole prompt (the simulated executor echoes it)
 * @param numOutputTokens tokens generated so far
 */
public record ScheduledSequence(
        long requestId,
        int[] tokens,
        int startPosition,
        int[] blockTable,
        int adapterSlot,
        boolean sample,
        SamplingParams params,
        RandomGenerator rng,
        int[] prompt,
        int numOutputTokens) {}
