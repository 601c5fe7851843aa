package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.EndpointMetrics;

/** An endpoint and the metrics the router last read from it: what filters and scorers see. */
public record EndpointState(Endpoint endpoint, EndpointMetrics metrics) {
}
