package dev.patchbay.bench.sim;

import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.metrics.EngineMetrics;
import dev.patchbay.metrics.MetricsOptions;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.scrape.AdapterIds;
import dev.patchbay.router.scrape.EndpointMetrics;
import dev.patchbay.router.scrape.MetricFamilies;
import java.nio.charset.StandardCharsets;

/** One engine in the fleet, with its place on the shared clock and what a scrape of it shows. */
final class Replica {
    final int index;
    final Endpoint endpoint;
    final EngineCore core;
    /** The step in progress, finishing at {@link #pendingEndNanos}; null when the engine is free. */
    EngineCore.PendingStep pending;

    long pendingEndNanos;
    /** Something arrived or a step ended: the engine should try a step as soon as it is free. */
    boolean wantsStep = true;
    /** While idle: when a load it waits for becomes ready (Long.MAX_VALUE if none). */
    long wakeAtNanos = Long.MAX_VALUE;
    /** Adapters registered on this engine, by workload index; see {@link FleetSimulator}. */
    final boolean[] registered;

    private EngineSnapshot scrapedSnapshot;
    private EndpointMetrics scraped;
    private EngineMetrics metrics;
    private static final String PAGE_FORMAT = "text/plain;version=0.0.4";

    Replica(int index, EngineCore core, int adapters) {
        this.registered = new boolean[adapters];
        this.index = index;
        // A name only: the simulator never opens a connection.
        this.endpoint = new Endpoint(String.format("replica-%03d", index), 8000);
        this.core = core;
    }

    /** When this replica next needs the driver: its step's end, now, or a load becoming ready. */
    long nextEventNanos(long now) {
        if (pending != null) return pendingEndNanos;
        if (wantsStep) return now;
        return wakeAtNanos;
    }

    /**
     * What a scrape of this replica's page would give the router as of now, built from the engine's snapshot (the
     * shortcut {@link SnapshotScrape}); rebuilt only when the engine's snapshot changed (a step, or a request
     * submitted since the last one).
     */
    EndpointMetrics scrapedMetrics(AdapterIds ids) {
        EngineSnapshot snapshot = core.snapshot();
        if (snapshot != scrapedSnapshot) {
            scraped = SnapshotScrape.read(snapshot, SnapshotScrape.View.RESIDENCY, ids);
            scrapedSnapshot = snapshot;
        }
        return scraped;
    }

    /** This replica's {@code /metrics} page as the router asks for it, rendered by the metrics module. */
    String page() {
        if (metrics == null) metrics = new EngineMetrics(MetricsOptions.of(core.config()), core::snapshot);
        return new String(metrics.scrape(MetricFamilies.ALL_SET, PAGE_FORMAT).body(), StandardCharsets.UTF_8);
    }
}
