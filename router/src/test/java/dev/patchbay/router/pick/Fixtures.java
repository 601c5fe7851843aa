package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.List;

final class Fixtures {
    private Fixtures() {}

    static EndpointState state(int port, EndpointMetrics metrics) {
        return new EndpointState(new Endpoint("127.0.0.1", port), metrics);
    }

    static EndpointState queue(int port, int waiting, double kv) {
        return state(
                port,
                EndpointMetrics.builder()
                        .waitingRequests(waiting)
                        .kvCacheUsage(kv)
                        .build());
    }

    static List<Integer> ports(List<EndpointState> states) {
        return states.stream().map(s -> s.endpoint().port()).toList();
    }

    /** A request going out to {@code target}, as the request lifecycle tells pre-request plugins; counts nothing. */
    record SentRequest(PickRequest request, List<EndpointState> candidates, EndpointState target) implements Dispatch {
        @Override
        public void countUntilShown() {}
    }

    /** A pick by {@code filter} whose request is then sent to the first endpoint it kept: filtered, then told. */
    static List<EndpointState> send(LoraSpreadFilter filter, PickRequest request, List<EndpointState> pool) {
        List<EndpointState> kept = filter.filter(request, pool);
        filter.preRequest(new SentRequest(request, pool, kept.getFirst()));
        return kept;
    }
}
