package dev.patchbay.engine.stats;

/**
 * Cumulative engine counters at the instant of a snapshot, grouped the way the metrics label them. LoRA tiers are
 * {@code gpu} (batch slots) and {@code cpu} (host memory); loads come from {@code disk} (storage into host memory)
 * or {@code cpu} (host memory into a slot).
 *
 * @param prefixCache tokens looked up in and found in the prefix cache
 * @param lora        zero when LoRA is disabled
 */
public record Counters(
        long preemptions,
        long promptTokens,
        long generationTokens,
        FinishCounts finished,
        PrefixCache prefixCache,
        Lora lora) {

    public static final Counters ZERO = new Counters(0, 0, 0, FinishCounts.ZERO, PrefixCache.ZERO, Lora.ZERO);

    /** Prefix cache use, in tokens. */
    public record PrefixCache(long queries, long hits) {
        public static final PrefixCache ZERO = new PrefixCache(0, 0);
    }

    /** A count for each LoRA tier. */
    public record ByTier(long gpu, long cpu) {
        public static final ByTier ZERO = new ByTier(0, 0);
    }

    /** A count for each place an adapter is loaded from. */
    public record BySource(long disk, long cpu) {
        public static final BySource ZERO = new BySource(0, 0);
    }

    /**
     * @param lookups      times a scheduled request needed its adapter in a tier
     * @param hits         times it found it there already
     * @param loadFailures loads from storage that failed
     */
    public record Lora(BySource loads, ByTier evictions, ByTier lookups, ByTier hits, long loadFailures) {
        public static final Lora ZERO = new Lora(BySource.ZERO, ByTier.ZERO, ByTier.ZERO, ByTier.ZERO, 0);
    }
}
