package dev.patchbay.bench.sim;

import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.LoraState;
import dev.patchbay.router.scrape.AdapterIds;
import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.HashSet;

/**
 * The simulator's only bridge from engine to router: what a scrape of a Patchbay server's {@code /metrics}
 * would have given the router's reader, built straight from the engine snapshot it would have rendered.
 */
public final class SnapshotScrape {
    /** Which LoRA families the router reads. */
    public enum View {
        /** vLLM's {@code vllm:lora_requests_info} only: running and waiting adapter names and max_lora. */
        LEGACY,
        /** Patchbay's families as well: per-adapter running and waiting, residency per tier, slot counts. */
        RESIDENCY
    }

    private SnapshotScrape() {}

    public static EndpointMetrics read(EngineSnapshot s, View view) {
        return read(s, view, AdapterIds.UNPOOLED);
    }

    /** The same, its adapter ids in {@code ids} (the simulated router's pool table). */
    public static EndpointMetrics read(EngineSnapshot s, View view, AdapterIds ids) {
        EndpointMetrics.Builder b = EndpointMetrics.builder()
                .ids(ids)
                .modelName(s.modelName())
                .waitingRequests(s.numWaiting())
                .waitingDeferred(s.numWaitingDeferred())
                .tokensWaiting(s.tokensWaiting())
                .runningRequests(s.numRunning())
                .kvCacheUsage(s.kvCacheUsage());
        LoraState lora = s.lora();
        if (lora == null) return b.build();
        // The legacy gauge: names with in-flight requests only; an idle resident adapter is not on it.
        b.activeAdapters(new HashSet<>(lora.runningAdapters()))
                .waitingAdapters(new HashSet<>(lora.waitingAdapters()))
                .maxLora(lora.maxLoras());
        if (view == View.LEGACY) return b.hasResidencyFamilies(false).build();
        b.slots(lora.maxLoras(), lora.slotsUsed());
        for (AdapterState a : lora.adapters()) {
            if (a.running() > 0) b.adapterRunning(a.name(), a.running());
            if (a.waiting() > 0) b.adapterWaiting(a.name(), a.waiting());
            if (a.level() != AdapterState.Level.NONE) {
                b.resident(a.name(), new AdapterResidency(a.level() == AdapterState.Level.GPU, a.pinned(), a.rank()));
            }
        }
        return b.build();
    }
}
