package dev.patchbay.router.place;

import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.Filter;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.List;
import java.util.function.Supplier;

/**
 * NVIDIA Dynamo's request filter over a placement: the adapter's available homes that have it loaded; else its
 * available homes (the request loads it there); else every candidate. Available: not busy, here at most
 * {@link #BUSY_WAITING} requests waiting (Dynamo's frontend marks a worker busy by its load). Base-model requests pass
 * unfiltered.
 */
public final class PlacementFilter implements Filter {
    public static final String NAME = "placement";
    /** A server with more requests waiting than this is busy, as the gateway's saturation detector counts. */
    public static final int BUSY_WAITING = 5;

    private final Supplier<Placement> placement;

    public PlacementFilter(Supplier<Placement> placement) {
        this.placement = placement;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<EndpointState> filter(PickRequest request, List<EndpointState> candidates) {
        if (request.baseModel()) return candidates;
        Placement now = placement.get();
        String adapter = request.model();
        List<EndpointState> homes = candidates.stream()
                .filter(c -> now.isHome(adapter, c.endpoint()) && c.metrics().waitingRequests() <= BUSY_WAITING)
                .toList();
        if (homes.isEmpty()) return candidates;
        List<EndpointState> loaded =
                homes.stream().filter(c -> loaded(c.metrics(), adapter)).toList();
        return loaded.isEmpty() ? homes : loaded;
    }

    private static boolean loaded(EndpointMetrics m, String adapter) {
        return m.residency().containsKey(adapter) || m.activeAdapters().contains(adapter);
    }
}
