package dev.patchbay.engine.stats;

/**
 * Cumulative engine counters at the instant of a snapshot. LoRA tiers are {@code gpu} (batch slots) and
 * {@code cpu} (host memory); loads come from {@code disk} (storage into host) or {@code cpu} (host into a slot).
 */
public record Counters(long preemptions, long promptTokens, long generationTokens, FinishCounts finished,
                       long prefixCacheQueries, long prefixCacheHits,
                       long loraLoadsFromDisk, long loraLoadsFromCpu, long loraEvictionsGpu, long loraEvictionsCpu,
                       long loraLookupsGpu, long loraHitsGpu, long loraLookupsCpu, long loraHitsCpu,
                       long loraLoadFailures) {}
