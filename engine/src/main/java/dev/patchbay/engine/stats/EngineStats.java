package dev.patchbay.engine.stats;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import java.util.HashMap;
import java.util.Map;

/**
 * The engine's cumulative counters, engine-wide and per adapter, in one place: the engine core owns it and hands it
 * to the scheduler and the adapter tiers, which report what happened; snapshots read it. Engine thread only.
 * A {@code null} adapter is the base model.
 */
public final class EngineStats {
    private long preemptions, promptTokens, generationTokens;
    private FinishCounts finished = FinishCounts.ZERO;
    private long prefixQueries, prefixHits;
    private long loadsFromDisk, loadsFromCpu, evictionsGpu, evictionsCpu, loadFailures;
    private long lookupsGpu, hitsGpu, lookupsCpu, hitsCpu;
    /** Per registration: an adapter loaded again under the same name starts from zero. */
    private final Map<RegisteredAdapter, AdapterTotals> adapters = new HashMap<>();

    private static final class AdapterTotals {
        long promptTokens, generationTokens;
        FinishCounts finished = FinishCounts.ZERO;
    }

    private static final AdapterTotals NONE = new AdapterTotals();

    public void preempted() {
        preemptions++;
    }

    /** A request's prompt was processed (counted when its first token comes). */
    public void promptProcessed(RegisteredAdapter adapter, int tokens) {
        promptTokens += tokens;
        if (adapter != null) totals(adapter).promptTokens += tokens;
    }

    public void tokenGenerated(RegisteredAdapter adapter) {
        generationTokens++;
        if (adapter != null) totals(adapter).generationTokens++;
    }

    public void requestFinished(RegisteredAdapter adapter, FinishReason reason) {
        finished = finished.plus(reason);
        if (adapter != null) {
            AdapterTotals t = totals(adapter);
            t.finished = t.finished.plus(reason);
        }
    }

    /** A request started from the prefix cache: {@code queried} tokens looked up, {@code hit} of them found. */
    public void prefixCacheLookup(long queried, long hit) {
        prefixQueries += queried;
        prefixHits += hit;
    }

    /** A request needed its adapter in a batch slot. */
    public void slotLookup(boolean hit) {
        lookupsGpu++;
        if (hit) hitsGpu++;
    }

    /** A request needed its adapter in host memory. */
    public void hostLookup(boolean hit) {
        lookupsCpu++;
        if (hit) hitsCpu++;
    }

    public void loadedFromDisk() {
        loadsFromDisk++;
    }

    public void loadedIntoSlot() {
        loadsFromCpu++;
    }

    public void evictedFromSlot() {
        evictionsGpu++;
    }

    public void evictedFromHost() {
        evictionsCpu++;
    }

    public void loadFailed() {
        loadFailures++;
    }

    /** Drops the per-adapter counters of an adapter that left the engine. */
    public void forget(RegisteredAdapter adapter) {
        adapters.remove(adapter);
    }

    public Counters counters() {
        return new Counters(
                preemptions,
                promptTokens,
                generationTokens,
                finished,
                new Counters.PrefixCache(prefixQueries, prefixHits),
                new Counters.Lora(
                        new Counters.BySource(loadsFromDisk, loadsFromCpu),
                        new Counters.ByTier(evictionsGpu, evictionsCpu),
                        new Counters.ByTier(lookupsGpu, lookupsCpu),
                        new Counters.ByTier(hitsGpu, hitsCpu),
                        loadFailures));
    }

    public long promptTokens(RegisteredAdapter adapter) {
        return adapters.getOrDefault(adapter, NONE).promptTokens;
    }

    public long generationTokens(RegisteredAdapter adapter) {
        return adapters.getOrDefault(adapter, NONE).generationTokens;
    }

    public FinishCounts finished(RegisteredAdapter adapter) {
        return adapters.getOrDefault(adapter, NONE).finished;
    }

    private AdapterTotals totals(RegisteredAdapter adapter) {
        return adapters.computeIfAbsent(adapter, a -> new AdapterTotals());
    }
}
