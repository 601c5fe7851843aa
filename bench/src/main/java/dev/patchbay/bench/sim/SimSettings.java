package dev.patchbay.bench.sim;

import dev.patchbay.engine.sim.LatencyModel;

/**
 * Everything about a fleet except the routing policy and the request stream.
 *
 * @param workload       adapters, their popularity, slots and host capacity, replica count
 * @param latency        the simulated executor's costs
 * @param maxNumSeqs     running requests per replica at most
 * @param numKvBlocks    KV blocks per replica (16 tokens each)
 * @param maxModelLen    prompt plus output tokens at most
 * @param scrapeNanos    how often the router reads each replica's metrics
 * @param durationNanos  how long requests arrive
 * @param drainNanos     how long after the last arrival requests may still finish before the run stops
 * @param loadsInFlight  adapter loads from storage in flight per replica at most
 */
public record SimSettings(
        Workload workload,
        LatencyModel latency,
        int maxNumSeqs,
        int numKvBlocks,
        int maxModelLen,
        long scrapeNanos,
        long durationNanos,
        long drainNanos,
        int loadsInFlight) {
    public static final long DEFAULT_SCRAPE_NANOS = 50_000_000L;
    /** The engine's own default. */
    public static final int DEFAULT_LOADS_IN_FLIGHT = 4;

    /** With the engine's default loads in flight. */
    public SimSettings(
            Workload workload,
            LatencyModel latency,
            int maxNumSeqs,
            int numKvBlocks,
            int maxModelLen,
            long scrapeNanos,
            long durationNanos,
            long drainNanos) {
        this(
                workload,
                latency,
                maxNumSeqs,
                numKvBlocks,
                maxModelLen,
                scrapeNanos,
                durationNanos,
                drainNanos,
                DEFAULT_LOADS_IN_FLIGHT);
    }

    public SimSettings {
        if (scrapeNanos <= 0) throw new IllegalArgumentException("scrape interval must be > 0");
        if (durationNanos <= 0) throw new IllegalArgumentException("duration must be > 0");
        if (drainNanos < 0) throw new IllegalArgumentException("drain must be >= 0");
        if (loadsInFlight < 1) throw new IllegalArgumentException("loads in flight must be >= 1");
    }

    public static SimSettings defaults(Workload workload, long durationNanos) {
        return new SimSettings(
                workload, LatencyModel.DEFAULT, 256, 8192, 4096, DEFAULT_SCRAPE_NANOS, durationNanos, 120_000_000_000L);
    }

    /**
     * The same fleet pooled into one server: every slot, host place, batch place, KV block and loader of all replicas,
     * and their compute (per-token and per-adapter costs divided by the replica count; a step's fixed cost kept). A
     * load takes as long as on one replica (N replicas load N adapters at once, not one N times as fast). Every
     * request can take whichever slot in the fleet frees first, with no scrape lag: the most any router in front of
     * the replicas could give it.
     */
    public SimSettings pooled() {
        int n = workload.replicas();
        Workload one = workload.withSizing(workload.maxLoras() * n, workload.maxCpuLoras() * n, 1);
        LatencyModel fast = new LatencyModel(
                latency.stepOverheadNanos(),
                latency.perPrefillTokenNanos() / n,
                latency.perDecodeSequenceNanos() / n,
                latency.perAdapterNanos() / n,
                latency.loadFromDiskNanos(),
                latency.loadIntoSlotNanos());
        return new SimSettings(
                one,
                fast,
                maxNumSeqs * n,
                numKvBlocks * n,
                maxModelLen,
                scrapeNanos,
                durationNanos,
                drainNanos,
                loadsInFlight * n);
    }

    public SimSettings withDrain(long nanos) {
        return new SimSettings(
                workload,
                latency,
                maxNumSeqs,
                numKvBlocks,
                maxModelLen,
                scrapeNanos,
                durationNanos,
                nanos,
                loadsInFlight);
    }
}
