package dev.patchbay.engine.stats;

/**
 * The engine's state at one instant, published after every step. Immutable: readers on other threads see
 * a whole snapshot or the previous one, never a mix of two steps.
 *
 * @param sequence      increases by one per published snapshot
 * @param nanos         engine clock time of the snapshot
 * @param unixSeconds   wall time of the snapshot
 * @param numWaitingDeferred waiting requests the scheduler skipped for their adapter (LoRA budget or adapter
 *                    load); the others of {@code numWaiting} wait for capacity
 * @param tokensWaiting prompt tokens the waiting and running requests have yet to prefill, those of requests not
 *                      yet scheduled included
 * @param lora          null when LoRA is disabled
 * @param lastStep      events since the previous snapshot
 */
public record EngineSnapshot(
        long sequence,
        long nanos,
        double unixSeconds,
        String modelName,
        int numRunning,
        int numWaiting,
        int numWaitingDeferred,
        long tokensWaiting,
        int kvBlocksTotal,
        int kvBlocksUsed,
        int blockSize,
        boolean prefixCaching,
        LoraState lora,
        Counters counters,
        StepStats lastStep) {

    public double kvCacheUsage() {
        return kvBlocksTotal == 0 ? 0 : (double) kvBlocksUsed / kvBlocksTotal;
    }
}
