package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import java.util.List;
import java.util.Map;

/**
 * Decides each adapter's homes from the arrival rates a router observes and the fleet it scrapes. The same inputs give
 * the same homes, so router replicas that observe alike agree without talking. An implementation may keep state from
 * one tick to the next (hysteresis); one instance serves one controller.
 */
public interface PlacementAlgorithm {
    String name();

    /**
     * The homes of the adapters that get any, best first.
     *
     * @param rates    smoothed arrivals per adapter (requests/s), adapters with none left out
     * @param fleet    the servers and what they hold
     * @param previous the homes this algorithm decided last time
     */
    Map<String, List<Endpoint>> plan(Map<String, Double> rates, FleetState fleet, Map<String, List<Endpoint>> previous);

    /** Whether the controller loads new homes ahead of demand and releases surplus copies, or only routes. */
    boolean acts();
}
