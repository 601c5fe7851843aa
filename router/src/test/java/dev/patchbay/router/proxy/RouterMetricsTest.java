package dev.patchbay.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.pick.Dispatch;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.LoraSpreadFilter;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.EndpointSource;
import dev.patchbay.router.pool.ServedModels;
import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RouterMetricsTest {
    /** Three slots, all held; each adapter given as name=running. */
    private static EndpointState busy(int port, int waiting, Map<String, Integer> running) {
        EndpointMetrics.Builder b =
                EndpointMetrics.builder().waitingRequests(waiting).slots(3, running.size());
        running.forEach((name, n) -> {
            b.resident(name, new AdapterResidency(true, false, 8));
            b.adapterRunning(name, n);
        });
        return new EndpointState(new Endpoint("10.0.0.1", port), b.build());
    }

    private static String page(RouterMetrics metrics) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        metrics.write(out);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void drainsStartedAndInProgressAreOnThePage() throws Exception {
        LoraSpreadFilter spread = new LoraSpreadFilter(() -> 0L, LoraSpreadFilter.Settings.DEFAULT.startingAtOnce());
        RouterMetrics metrics = new RouterMetrics();
        metrics.watch(spread);
        assertThat(page(metrics))
                .contains("patchbay_router_lora_drains_started_total 0.0")
                .doesNotContain("patchbay_router_lora_drain{");

        // Port 1 alone holds "hot" with a long queue; every slot is busy: the filter drains port 3's "a".
        List<EndpointState> pool = List.of(
                busy(1, 40, Map.of("hot", 250, "a", 3, "b", 3)),
                busy(2, 0, Map.of("c", 60, "d", 30, "e", 20)),
                busy(3, 1, Map.of("f", 50, "a", 2, "g", 40)));
        for (int i = 0; i < 2; i++) { // two requests for it sent, each to its holder
            spread.filter(PickRequest.adapter("hot"), pool);
            spread.preRequest(new Dispatch() {
                @Override
                public PickRequest request() {
                    return PickRequest.adapter("hot");
                }

                @Override
                public List<EndpointState> candidates() {
                    return pool;
                }

                @Override
                public EndpointState target() {
                    return pool.getFirst();
                }

                @Override
                public void countUntilShown() {}
            });
        }

        assertThat(page(metrics))
                .contains("patchbay_router_lora_drains_started_total 1.0")
                .contains("patchbay_router_lora_drain{adapter=\"a\",endpoint=\"10.0.0.1:3\",for_adapter=\"hot\"} 1.0");
    }

    @Test
    void eachEndpointsListedModelsAreCountedAndAnUnknownListIsZero() throws Exception {
        Endpoint listing = new Endpoint("10.0.0.1", 1), failing = new Endpoint("10.0.0.1", 2);
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(List.of(listing, failing)),
                (e, ids) -> EndpointMetrics.EMPTY,
                Duration.ofMillis(50),
                Duration.ofHours(1),
                e -> {},
                () -> 0L)) {
            pool.learnServedModels(
                    endpoint -> {
                        if (endpoint.equals(failing)) {
                            throw new IOException("/v1/models answered HTTP 404");
                        }
                        return new ServedModels(Set.of("base", "a", "b"), Set.of("base"));
                    },
                    Duration.ofSeconds(1));
            RouterMetrics metrics = new RouterMetrics();
            metrics.watch(pool);
            pool.scrapeNow();
            assertThat(page(metrics))
                    .contains("patchbay_router_endpoint_served_models{endpoint=\"10.0.0.1:1\"} 3.0")
                    .contains("patchbay_router_endpoint_served_models{endpoint=\"10.0.0.1:2\"} 0.0");
        }
    }

    @Test
    void scrapesThatGaveDataAreCountedPerEndpointAndFailedOnesAreNot() throws Exception {
        Endpoint answering = new Endpoint("10.0.0.1", 1), silent = new Endpoint("10.0.0.1", 2);
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(List.of(answering, silent)),
                (e, ids) -> {
                    if (e.equals(silent)) {
                        throw new IOException("connection refused");
                    }
                    return EndpointMetrics.EMPTY;
                },
                Duration.ofMillis(50),
                Duration.ofHours(1),
                e -> {},
                () -> 0L)) {
            RouterMetrics metrics = new RouterMetrics();
            metrics.watch(pool);
            pool.scrapeNow();
            pool.scrapeNow();
            pool.scrapeNow();
            assertThat(page(metrics))
                    .contains("patchbay_router_scrapes_total{endpoint=\"10.0.0.1:1\"} 3.0")
                    .contains("patchbay_router_scrapes_total{endpoint=\"10.0.0.1:2\"} 0.0");
        }
    }
}
