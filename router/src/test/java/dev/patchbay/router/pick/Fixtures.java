package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.EndpointMetrics;

import java.util.List;

final class Fixtures {
    private Fixtures() {
    }

    static EndpointState state(int port, EndpointMetrics metrics) {
        return new EndpointState(new Endpoint("127.0.0.1", port), metrics);
    }

    static EndpointState queue(int port, int waiting, double kv) {
        return state(port, EndpointMetrics.builder().waitingRequests(waiting).kvCacheUsage(kv).build());
    }

    static List<Integer> ports(List<EndpointState> states) {
        return states.stream().map(s -> s.endpoint().port()).toList();
    }
}
