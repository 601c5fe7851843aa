package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.stats.Counters;
import dev.patchbay.router.Router;
import dev.patchbay.router.RouterOptions;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three real Patchbay servers behind the real router, all on loopback. */
class RoutedFleetTest {
    static final Duration STALENESS = Duration.ofMillis(1000);
    static final List<String> ADAPTERS = List.of("a0", "a1", "a2", "a3", "a4", "a5");

    @TempDir
    Path dir;

    final List<PatchbayServer> servers = new ArrayList<>();
    final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    Router router;

    private String[] serverArgs(int port) {
        return new SimAdapterServer("fleet", dir, ADAPTERS, 2, 2, SimAdapterServer.SIM_LATENCY_MS).args(port);
    }

    private void startFleet() throws Exception {
        new SimAdapterServer("fleet", dir, ADAPTERS, 2, 2, SimAdapterServer.SIM_LATENCY_MS).writeAdapters();
        List<Endpoint> endpoints = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            PatchbayServer s = PatchbayServer.start(ServeCommand.parse(serverArgs(0)));
            servers.add(s);
            endpoints.add(new Endpoint("127.0.0.1", s.port()));
        }
        // Scrapes every 50 ms as in production; staleness is wider than the 200 ms default because a loaded
        // 2-core CI machine running the whole suite can delay a scrape that long without the server being down.
        router = new Router(RouterOptions.builder(EndpointSource.of(endpoints))
                        .scrapeInterval(Duration.ofMillis(50))
                        .staleness(STALENESS)
                        .build())
                .start();
        awaitReady(3);
    }

    /** Waits until the router's own metrics say exactly {@code n} endpoints are ready. */
    private void awaitReady(int n) {
        Await.until("the router sees " + n + " ready endpoints", () -> readyEndpoints() == n, this::readyEndpoints);
    }

    private long readyEndpoints() {
        try {
            return get(router.port(), "/metrics")
                    .lines()
                    .filter(l -> l.startsWith("patchbay_router_endpoint_ready{") && l.endsWith(" 1.0"))
                    .count();
        } catch (Exception e) {
            throw new AssertionError("the router's /metrics failed", e);
        }
    }

    @AfterEach
    void stop() {
        if (router != null) router.stop();
        for (PatchbayServer s : servers) {
            try {
                s.stop();
            } catch (RuntimeException ignored) {
                // already stopped by the test
            }
        }
    }

    private String get(int port, String path) throws Exception {
        return http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    private HttpResponse<String> complete(String model, int maxTokens) throws Exception {
        return complete(router.port(), model, maxTokens);
    }

    private HttpResponse<String> complete(int port, String model, int maxTokens) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model
                                + "\",\"prompt\":\"the water\",\"max_tokens\":" + maxTokens + ",\"ignore_eos\":true}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Sends {@code count} requests from {@code clients} threads; returns requests per destination. */
    private Map<String, Integer> traffic(int clients, int count, long seed, Map<Integer, AtomicInteger> statuses)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        ConcurrentHashMap<String, Integer> perEndpoint = new ConcurrentHashMap<>();
        AtomicInteger next = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            SplittableRandom rnd = new SplittableRandom(seed + c);
            futures.add(pool.submit(() -> {
                while (next.getAndIncrement() < count) {
                    HttpResponse<String> r = complete(ADAPTERS.get(rnd.nextInt(ADAPTERS.size())), 8 + rnd.nextInt(24));
                    statuses.computeIfAbsent(r.statusCode(), k -> new AtomicInteger())
                            .incrementAndGet();
                    r.headers()
                            .firstValue("x-gateway-destination-endpoint")
                            .ifPresent(d -> perEndpoint.merge(d, 1, Integer::sum));
                }
                return null;
            }));
        }
        for (Future<?> f : futures) f.get(180, TimeUnit.SECONDS);
        pool.shutdown();
        return new HashMap<>(perEndpoint);
    }

    private long[] gpuLookupsAndHits() {
        long lookups = 0, hits = 0;
        for (PatchbayServer s : servers) {
            Counters c = s.engine().snapshot().counters();
            lookups += c.lora().lookups().gpu();
            hits += c.lora().hits().gpu();
        }
        return new long[] {lookups, hits};
    }

    /**
     * Two routers, one server with one batch slot: the router whose view is old sends a request for another adapter
     * to the slot the other router's request took; the real server refuses it at once for want of a slot, and that
     * router holds it again and sends it, without asking for a slot, once its wait is over.
     */
    @Test
    void aSlotAnotherRouterTookIsRefusedByTheServerAndTheRequestWaitsAgain() throws Exception {
        new SimAdapterServer("fleet", dir, ADAPTERS, 1, 2, "20,0,0,0,0,0").writeAdapters();
        PatchbayServer server = PatchbayServer.start(
                ServeCommand.parse(new SimAdapterServer("fleet", dir, ADAPTERS, 1, 2, "20,0,0,0,0,0").args(0)));
        servers.add(server);
        List<Endpoint> endpoints = List.of(new Endpoint("127.0.0.1", server.port()));
        router = new Router(RouterOptions.builder(EndpointSource.of(endpoints))
                        .scrapeInterval(Duration.ofMillis(50))
                        .staleness(STALENESS)
                        .build())
                .start();
        // Scrapes once now and not again within the test: it keeps seeing the slot free.
        Router stale = new Router(RouterOptions.builder(EndpointSource.of(endpoints))
                        .scrapeInterval(Duration.ofSeconds(60))
                        .staleness(Duration.ofSeconds(120))
                        .build())
                .start();
        try {
            awaitReady(1);
            Await.until(
                    "the stale router has read the idle server",
                    () -> stale.pool().readyStates().size() == 1);
            Future<HttpResponse<String>> holding =
                    Executors.newVirtualThreadPerTaskExecutor().submit(() -> complete(router.port(), "a0", 250));
            Await.until(
                    "a0 runs in the only slot",
                    () -> server.engine().snapshot().lora().runningAdapters().contains("a0"));

            HttpResponse<String> refusedThenServed = complete(stale.port(), "a1", 2);

            assertThat(refusedThenServed.statusCode()).isEqualTo(200);
            assertThat(stale.lifecycle().slotRefusals()).isEqualTo(1);
            assertThat(holding.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            assertThat(router.lifecycle().slotRefusals()).isZero();
            assertThat(server.engine().snapshot().counters().finished().total())
                    .as("the refused request was never queued")
                    .isEqualTo(2);
        } finally {
            stale.stop();
        }
    }

    @Test
    void requestsLandWhereTheirAdapterIsAndLoadStaysBalanced() throws Exception {
        startFleet();
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        traffic(6, 120, 1, statuses); // warm-up: adapters settle into slots
        long[] before = gpuLookupsAndHits();
        Map<String, Integer> perEndpoint = traffic(6, 360, 2, statuses);
        long[] after = gpuLookupsAndHits();

        assertThat(statuses.keySet()).containsOnly(200);
        double hitRatio = (double) (after[1] - before[1]) / (after[0] - before[0]);
        // What the router decided, so that a miss says whether it moved adapters (drains) or picked past them.
        String decisions = String.join(
                "; ",
                get(router.port(), "/metrics")
                        .lines()
                        .filter(l -> l.startsWith("patchbay_router_lora_drain")
                                || l.startsWith("patchbay_router_adapter_placement_total"))
                        .toList());
        System.out.printf(
                "routed fleet: slot hit ratio %.3f, requests per server %s, router: %s%n",
                hitRatio, perEndpoint, decisions);
        assertThat(hitRatio)
                .as("share of requests whose adapter was already in a slot (router: " + decisions + ")")
                .isGreaterThanOrEqualTo(0.90);
        assertThat(perEndpoint).hasSize(3);
        double mean = perEndpoint.values().stream()
                .mapToInt(Integer::intValue)
                .average()
                .orElseThrow();
        assertThat(perEndpoint.values())
                .as("requests per server " + perEndpoint)
                .allSatisfy(n -> assertThat(Math.abs(n - mean) / mean).isLessThanOrEqualTo(0.25));
    }

    @Test
    void aKilledServerIsAvoidedUntilItComesBack() throws Exception {
        startFleet();
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        traffic(3, 30, 3, statuses);
        PatchbayServer victim = servers.get(1);
        int port = victim.port();
        String victimName = "127.0.0.1:" + port;
        victim.stop();
        awaitReady(2);
        Map<Integer, AtomicInteger> afterKill = new ConcurrentHashMap<>();
        Map<String, Integer> dest = traffic(3, 60, 4, afterKill);
        assertThat(dest).doesNotContainKey(victimName);
        assertThat(afterKill.keySet()).containsOnly(200);

        servers.set(1, PatchbayServer.start(ServeCommand.parse(serverArgs(port))));
        awaitReady(3);
        Map<String, Integer> back = traffic(3, 90, 5, new ConcurrentHashMap<>());
        assertThat(back).containsKey(victimName);
    }

    @Test
    void allServersDownAnswers503() throws Exception {
        startFleet();
        for (PatchbayServer s : servers) s.stop();
        awaitReady(0);
        HttpResponse<String> r = complete("a0", 4);
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body()).contains("\"error\"");
    }
}
