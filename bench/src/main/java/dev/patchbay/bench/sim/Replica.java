package dev.patchbay.bench.sim;

import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.scrape.EndpointMetrics;

/** One engine in the fleet, with its place on the shared clock and what the router last scraped from it. */
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
    private long scrapedSequence = -1;
    private EndpointState scraped;

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

    /** The router's view as of now: rebuilt only when the engine published a new snapshot. */
    EndpointState scrape(SnapshotScrape.View view) {
        var snapshot = core.snapshot();
        if (snapshot.sequence() != scrapedSequence || scraped == null) {
            EndpointMetrics m = SnapshotScrape.read(snapshot, view);
            scraped = new EndpointState(endpoint, m);
            scrapedSequence = snapshot.sequence();
        }
        return scraped;
    }
}
