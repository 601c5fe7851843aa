package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.router.Router;
import dev.patchbay.router.RouterOptions;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointSource;
import dev.patchbay.server.PatchbayServer;
import dev.patchbay.server.ServeCommand;
import dev.patchbay.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three real Patchbay servers (two slots each, runtime adapter updates on) behind the real router with placement on:
 * six adapters of unequal popularity get homes in proportion to their traffic, loaded through the servers' admin API,
 * and when a cold adapter becomes the hottest its homes follow. No request fails meanwhile.
 */
class PlacementFleetTest {
    static final List<String> ADAPTERS = List.of("a0", "a1", "a2", "a3", "a4", "a5");
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    final List<PatchbayServer> servers = new ArrayList<>();
    final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    Router router;

    @AfterEach
    void stop() {
        if (router != null) router.stop();
        for (PatchbayServer s : servers) s.stop();
    }

    private void startFleet() throws Exception {
        SimAdapterServer server =
                new SimAdapterServer("fleet", dir, ADAPTERS, 2, 4, SimAdapterServer.SIM_LATENCY_MS).writeAdapters();
        List<Endpoint> endpoints = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            PatchbayServer s =
                    PatchbayServer.start(ServeCommand.parse(server.args(0, "--allow-runtime-lora-updating")));
            servers.add(s);
            endpoints.add(new Endpoint("127.0.0.1", s.port()));
        }
        router = new Router(RouterOptions.builder(EndpointSource.of(endpoints))
                        .config(RouterConfig.DEFAULT.withPlacementOn(true))
                        .scrapeInterval(Duration.ofMillis(50))
                        .staleness(Duration.ofSeconds(1))
                        .build())
                .start();
        Await.until(
                "the router's pool has read every server", () -> router.pool().synced());
    }

    /** Closed-loop traffic from {@code clients} threads until stopped, adapters drawn by {@code weights}. */
    private final class Traffic implements AutoCloseable {
        final AtomicReference<double[]> weights;
        final Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        final ExecutorService pool;
        final List<Future<?>> clients = new ArrayList<>();
        volatile boolean running = true;

        Traffic(int clientCount, double[] initial) {
            weights = new AtomicReference<>(initial);
            pool = Executors.newFixedThreadPool(clientCount);
            for (int c = 0; c < clientCount; c++) {
                SplittableRandom random = new SplittableRandom(c);
                clients.add(pool.submit(() -> {
                    while (running) {
                        HttpResponse<String> r = complete(draw(random));
                        statuses.computeIfAbsent(r.statusCode(), k -> new AtomicInteger())
                                .incrementAndGet();
                    }
                    return null;
                }));
            }
        }

        private String draw(SplittableRandom random) {
            double[] w = weights.get();
            double total = 0;
            for (double x : w) total += x;
            double u = random.nextDouble() * total;
            for (int i = 0; i < w.length; i++) {
                u -= w[i];
                if (u < 0) return ADAPTERS.get(i);
            }
            return ADAPTERS.getLast();
        }

        @Override
        public void close() throws Exception {
            running = false;
            for (Future<?> f : clients) f.get(60, TimeUnit.SECONDS);
            pool.shutdown();
        }
    }

    private HttpResponse<String> complete(String model) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + router.port() + "/v1/completions"))
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model
                                + "\",\"prompt\":\"the water\",\"max_tokens\":4,\"ignore_eos\":true}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode placement() {
        try {
            return JSON.readTree(http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + router.port() + "/admin/placement"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body());
        } catch (Exception e) {
            throw new AssertionError("GET /admin/placement failed", e);
        }
    }

    /** The adapter's entry in the placement view, or null. */
    private static JsonNode entry(JsonNode view, String adapter) {
        for (JsonNode a : view.get("adapters")) {
            if (a.get("adapter").asText().equals(adapter)) return a;
        }
        return null;
    }

    /** The adapter has at least {@code homes} desired homes, and every one holds it. */
    private boolean placed(String adapter, int homes) {
        JsonNode a = entry(placement(), adapter);
        if (a == null || a.get("desired").size() < homes) return false;
        List<String> actual = new ArrayList<>();
        a.get("actual").forEach(n -> actual.add(n.asText()));
        for (JsonNode home : a.get("desired")) {
            if (!actual.contains(home.asText())) return false;
        }
        return true;
    }

    @Test
    void hotAdaptersGetHomesInProportionAndFollowAPopularityShift() throws Exception {
        startFleet();
        try (Traffic traffic = new Traffic(4, new double[] {16, 8, 4, 2, 1, 1})) {
            Await.until("a0, the hottest, is placed on at least two servers", () -> placed("a0", 2), this::placement);
            JsonNode view = placement();
            assertThat(view.get("enabled").asBoolean()).isTrue();
            assertThat(view.get("algorithm").asText()).isEqualTo("balanced");
            assertThat(entry(view, "a0").get("desired").size())
                    .isGreaterThan(entry(view, "a3").get("desired").size());

            // a5 becomes the hottest.
            traffic.weights.set(new double[] {1, 1, 2, 4, 8, 16});
            Await.until("a5's homes follow its traffic", () -> placed("a5", 2), this::placement);
            assertThat(placement().get("loads").get("failed").asLong()).isZero();
            assertThat(placement().get("loads").get("started").asLong()).isPositive();
        }
        String metrics = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + router.port() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        assertThat(metrics)
                .contains("patchbay_router_placement_homes{adapter=\"a5\",kind=\"desired\"}")
                .contains("patchbay_router_placement_loads_total{outcome=\"started\"}");
    }

    @Test
    void noRequestFailsWhilePlacementMovesAdapters() throws Exception {
        startFleet();
        Map<Integer, AtomicInteger> statuses;
        try (Traffic traffic = new Traffic(4, new double[] {16, 8, 4, 2, 1, 1})) {
            statuses = traffic.statuses;
            Await.until("a0 is placed", () -> placed("a0", 2), this::placement);
            traffic.weights.set(new double[] {1, 1, 2, 4, 8, 16});
            Await.until("a5 is placed", () -> placed("a5", 2), this::placement);
            traffic.weights.set(new double[] {16, 8, 4, 2, 1, 1});
            Await.until("a0 is placed again", () -> placed("a0", 2), this::placement);
        }
        assertThat(statuses.keySet()).containsOnly(200);
        assertThat(statuses.get(200).get()).isPositive();
    }
}
