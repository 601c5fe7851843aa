package dev.patchbay.bench.sim;

import dev.patchbay.engine.clock.VirtualClock;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.profile.PluginContext;
import dev.patchbay.router.place.AdapterAdmin;
import dev.patchbay.router.place.Placement;
import dev.patchbay.router.place.PlacementController;
import dev.patchbay.router.place.PlacementSettings;
import dev.patchbay.router.place.Placements;
import dev.patchbay.router.place.PoolFleet;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.EndpointSource;
import dev.patchbay.router.route.RequestLifecycle;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;

/**
 * One router of the simulated fleet's front: its own pool (scraped on its own phase), picker, lifecycle and, when the
 * policy places adapters, placement controller, all on the virtual clock.
 */
final class SimRouter implements AutoCloseable {
    /** Scrapes never fail here; the bound only has to be one the real router would accept. */
    private static final Duration STALENESS = Duration.ofSeconds(10);

    final EndpointPool pool;
    final RequestLifecycle lifecycle;
    /** Null when the policy does not place adapters. */
    final PlacementController placement;
    /** When this router next scrapes. */
    long nextScrape;

    /**
     * Router {@code index} of {@code count}: it scrapes once at once, then at {@code index / count} of the scrape
     * interval and every interval after, and the first
     * draws its random choices as a single router always did, so one-router runs keep their streams.
     */
    SimRouter(
            int index,
            int count,
            SimPolicy policy,
            long seed,
            List<Endpoint> endpoints,
            EndpointPool.MetricsSource source,
            Consumer<Endpoint> onScrapeFailure,
            long scrapeNanos,
            VirtualClock clock,
            AdapterAdmin admin,
            Map<String, String> adapterPaths) {
        pool = new EndpointPool(
                EndpointSource.of(endpoints),
                source,
                Duration.ofNanos(scrapeNanos),
                STALENESS,
                onScrapeFailure,
                clock::nanos);
        placement = policy.places()
                ? new PlacementController(
                        PlacementSettings.DEFAULT,
                        Placements.create(policy.placement()),
                        () -> PoolFleet.read(pool, adapterPaths),
                        admin,
                        clock::nanos)
                : null;
        Random random = new Random(index == 0 ? seed : seed * 31 + index);
        EndpointPicker picker = policy.profile()
                .create(new PluginContext(
                        random, clock::nanos, placement == null ? () -> Placement.NONE : placement::placement));
        lifecycle = new RequestLifecycle(pool, picker, policy.flowControl());
        if (placement != null) lifecycle.placeWith(placement);
        nextScrape = scrapeNanos * index / count;
        // A router reads every server before it takes requests, as the real one does at start; its rounds then
        // keep their own phase.
        if (nextScrape > 0) pool.scrapeNow();
    }

    @Override
    public void close() {
        pool.close();
    }
}
