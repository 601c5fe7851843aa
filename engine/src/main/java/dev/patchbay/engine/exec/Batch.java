package dev.patchbay.engine.exec;

import java.util.List;

/**
 * Everything an executor needs for one step.
 *
 * @param sequences     the scheduled sequences, decodes and prefill chunks mixed
 * @param numTokens     total tokens to process (the sum of the sequences' token counts)
 * @param numPrefillTokens tokens of sequences still in their prompt
 * @param numDecodes    sequences past their prompt, producing one token each
 * @param numAdapters   distinct adapters in the batch
 * @param blockSize     tokens per KV block
 */
public record Batch(
        List<ScheduledSequence> sequences,
        int numTokens,
        int numPrefillTokens,
        int numDecodes,
        int numAdapters,
        int blockSize) {}
