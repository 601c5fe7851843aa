package dev.patchbay.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.route.RequestLifecycle;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ProxyTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
    }

    private FakeModelServer server(String name, String page) throws Exception {
        FakeModelServer server = new FakeModelServer(name, page);
        toClose.add(server);
        return server;
    }

    private RouterHarness router(RouterConfig config, FakeModelServer... servers) {
        RouterHarness harness = RouterHarness.over(config, servers);
        toClose.add(harness);
        return harness;
    }

    private static String servedBy(HttpResponse<String> response) throws Exception {
        return JSON.readTree(response.body()).path("served_by").asText();
    }

    @Test
    void sendsTheAdapterWhereItIsResidentAndNamesTheEndpoint() throws Exception {
        FakeModelServer cold = server("cold", FakeModelServer.page(0, 0.1));
        FakeModelServer warm = server("warm", FakeModelServer.page(0, 0.1, "sql"));
        RouterHarness router = router(RouterConfig.DEFAULT, cold, warm);
        router.awaitReady(2);
        for (int i = 0; i < 10; i++) {
            HttpResponse<String> response = router.complete("sql");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue(ProxyHandler.DESTINATION_HEADER))
                    .contains(warm.address());
            assertThat(servedBy(response)).isEqualTo("warm");
        }
        assertThat(warm.models).hasSize(10).containsOnly("sql");
        assertThat(cold.completions.get()).isZero();
        // only the families the router reads were asked for
        assertThat(warm.metricsQueries.getLast()).contains("name%5B%5D=vllm%3Alora_adapter_loaded");
    }

    @Test
    void aModelOnlyOneServerListsGoesOnlyThereEvenWhereTheOtherLooksBetter() throws Exception {
        FakeModelServer idle = server("idle", FakeModelServer.page(0, 0.0));
        FakeModelServer busy = server("busy", FakeModelServer.page(6, 0.7));
        idle.listed = List.of("base", "sql");
        busy.listed = List.of("base", "sql", "loaded-later");
        RouterHarness router = router(RouterConfig.DEFAULT, idle, busy);
        router.awaitReady(2);
        RouterHarness.await("the router counts busy's list", () -> {
            try {
                return router.get("/metrics")
                        .body()
                        .contains("patchbay_router_endpoint_served_models{endpoint=\"" + busy.address() + "\"} 3.0");
            } catch (Exception e) {
                return false;
            }
        });
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> response = router.complete("loaded-later");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(servedBy(response)).isEqualTo("busy");
        }
        assertThat(idle.completions.get()).isZero();
        assertThat(servedBy(router.complete("sql")))
                .as("both list sql: the idle one")
                .isEqualTo("idle");
    }

    @Test
    void streamsServerSentEventsAsTheyArrive() throws Exception {
        FakeModelServer server = server("s", FakeModelServer.page(0, 0.1, "sql"));
        CountDownLatch gate = new CountDownLatch(1);
        server.streamGate = gate;
        RouterHarness router = router(RouterConfig.DEFAULT, server);
        router.awaitReady(1);
        AtomicBoolean watchdogFired = new AtomicBoolean();
        Thread watchdog = Thread.ofVirtual().start(() -> {
            try {
                if (!gate.await(5, TimeUnit.SECONDS)) {
                    watchdogFired.set(true);
                    gate.countDown();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        HttpResponse<InputStream> response = router.client.send(
                router.request("/v1/completions")
                        .POST(HttpRequest.BodyPublishers.ofString(
                                "{\"model\":\"sql\",\"prompt\":\"hi\",\"stream\":true}"))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.headers().firstValue("content-type"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("text/event-stream"));
        assertThat(response.headers().firstValue(ProxyHandler.DESTINATION_HEADER))
                .contains(server.address());
        List<String> lines = new ArrayList<>();
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String first = reader.readLine();
            // The server is still holding back the rest: this event came through on its own.
            assertThat(watchdogFired).isFalse();
            assertThat(first).isEqualTo("data: {\"index\":0,\"served_by\":\"s\"}");
            gate.countDown();
            String line;
            while ((line = reader.readLine()) != null && lines.size() < 100) {
                if (!line.isEmpty()) {
                    lines.add(line);
                }
            }
        }
        watchdog.join(Duration.ofSeconds(5));
        assertThat(lines)
                .containsExactly(
                        "data: {\"index\":1,\"served_by\":\"s\"}",
                        "data: {\"index\":2,\"served_by\":\"s\"}",
                        "data: [DONE]");
    }

    @Test
    void promptTokensCountAtTheEndpointUntilTheFirstByteOfItsAnswer() throws Exception {
        FakeModelServer server = server("s", FakeModelServer.page(0, 0.1, "sql"));
        CountDownLatch answer = new CountDownLatch(1);
        CountDownLatch rest = new CountDownLatch(1);
        server.answerGate = answer;
        server.streamGate = rest;
        RouterHarness router = router(RouterConfig.DEFAULT, server);
        router.awaitReady(1);
        Endpoint endpoint = Endpoint.parse(server.address());
        var pool = router.router.pool();
        try {
            // 400 characters: about 100 tokens
            var response = router.client.sendAsync(
                    router.request("/v1/completions")
                            .POST(HttpRequest.BodyPublishers.ofString(
                                    "{\"model\":\"sql\",\"prompt\":\"" + "x".repeat(400) + "\",\"stream\":true}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            RouterHarness.await("prompt counted", () -> pool.promptTokensInFlight(endpoint) == 100);
            assertThat(pool.readyStates().getFirst().promptTokensInFlight()).isEqualTo(100);
            assertThat(router.get("/metrics").body())
                    .contains("patchbay_router_endpoint_prompt_tokens_in_flight{endpoint=\"" + server.address()
                            + "\"} 100.0");
            answer.countDown();
            // the first event is through while the server still holds the rest: the prefill is done
            RouterHarness.await("prompt answered", () -> pool.promptTokensInFlight(endpoint) == 0);
            assertThat(response).isNotDone();
            rest.countDown();
            assertThat(response.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            assertThat(pool.promptTokensInFlight(endpoint)).isZero();
        } finally {
            answer.countDown();
            rest.countDown();
        }
    }

    @Test
    void killedServerGetsNoRequestsOnceStaleAndIsUsedAgainWhenBack() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        FakeModelServer b = server("b", FakeModelServer.page(0, 0.1, "sql"));
        RouterHarness router = new RouterHarness(
                RouterConfig.DEFAULT, Duration.ofMillis(50), Duration.ofMillis(200), List.of(a.address(), b.address()));
        toClose.add(router);
        router.awaitReady(2);
        a.kill();
        router.awaitReady(1);
        int before = a.completions.get();
        for (int i = 0; i < 20; i++) {
            HttpResponse<String> response = router.complete("sql");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(servedBy(response)).isEqualTo("b");
        }
        assertThat(a.completions.get()).isEqualTo(before);

        a.revive();
        router.awaitReady(2);
        int servedByA = 0;
        for (int i = 0; i < 200 && servedByA == 0; i++) {
            if (servedBy(router.complete("sql")).equals("a")) {
                servedByA++;
            }
        }
        assertThat(servedByA).isPositive();
    }

    @Test
    void allServersDownAnswers503WithoutWaiting() throws Exception {
        List<String> closedPorts = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                closedPorts.add("127.0.0.1:" + socket.getLocalPort());
            }
        }
        RouterHarness router =
                new RouterHarness(RouterConfig.DEFAULT, Duration.ofMillis(50), Duration.ofMillis(200), closedPorts);
        toClose.add(router);
        // No endpoint was ever ready: the router refuses at once rather than wait for one (the client's time-out
        // would fail this test otherwise).
        HttpResponse<String> response = router.complete("sql");
        assertThat(response.statusCode()).isEqualTo(503);
        JsonNode error = JSON.readTree(response.body()).path("error");
        assertThat(error.path("message").asText()).isNotEmpty();
        assertThat(error.has("type") && error.has("param") && error.has("code")).isTrue();
    }

    @Test
    void refusedConnectionRetriesTheNextBestEndpoint() throws Exception {
        FakeModelServer preferred = server("preferred", FakeModelServer.page(0, 0.1, "sql"));
        FakeModelServer other = server("other", FakeModelServer.page(0, 0.1));
        // Slow scrapes: the router keeps believing in the killed server until the proxy finds out.
        RouterHarness router = new RouterHarness(
                RouterConfig.DEFAULT,
                Duration.ofSeconds(10),
                Duration.ofSeconds(30),
                List.of(preferred.address(), other.address()));
        toClose.add(router);
        router.awaitReady(2);
        preferred.kill();
        HttpResponse<String> response = router.complete("sql");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue(ProxyHandler.DESTINATION_HEADER))
                .contains(other.address());
        assertThat(servedBy(response)).isEqualTo("other");
        // and the refused endpoint is out of rotation until it answers a scrape again
        assertThat(router.router.pool().readyStates()).hasSize(1);
        assertThat(servedBy(router.complete("sql"))).isEqualTo("other");
        // neither attempt left prompt tokens counted
        assertThat(router.router.pool().promptTokensInFlight(Endpoint.parse(preferred.address())))
                .isZero();
        assertThat(router.router.pool().promptTokensInFlight(Endpoint.parse(other.address())))
                .isZero();
        // Both sends are booked against the endpoint that served them, none against the one that refused.
        String metrics = router.get("/metrics").body();
        assertThat(metrics).contains("patchbay_router_picks_total{endpoint=\"" + other.address() + "\"} 2");
        assertThat(metrics).doesNotContain("patchbay_router_picks_total{endpoint=\"" + preferred.address() + "\"}");
        assertThat(router.router.pool().statuses()).allSatisfy(status -> {
            assertThat(status.metrics().waitingRequests())
                    .as("own requests left on " + status.endpoint())
                    .isZero();
            assertThat(status.metrics().runningRequests())
                    .as("own requests left on " + status.endpoint())
                    .isZero();
        });
    }

    @Test
    void aConnectionDroppedBeforeTheAnswerIsRetriedOnTheNextBestEndpoint() throws Exception {
        FakeModelServer dying = server("dying", FakeModelServer.page(0, 0.1, "sql"));
        FakeModelServer other = server("other", FakeModelServer.page(0, 0.1));
        RouterHarness router = router(RouterConfig.DEFAULT, dying, other);
        router.awaitReady(2);
        // It still answers its scrapes: only the request finds the connection gone.
        dying.hangUpOnCompletions = true;
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> response = router.complete("sql");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(servedBy(response)).isEqualTo("other");
            assertThat(response.headers().firstValue(ProxyHandler.DESTINATION_HEADER))
                    .contains(other.address());
        }
        assertThat(dying.completions.get())
                .as("each request tried the best-ranked server first")
                .isEqualTo(3);
        String metrics = router.get("/metrics").body();
        assertThat(metrics).contains("patchbay_router_picks_total{endpoint=\"" + other.address() + "\"} 3");
        assertThat(metrics).doesNotContain("patchbay_router_picks_total{endpoint=\"" + dying.address() + "\"}");
        assertThat(router.router.pool().promptTokensInFlight(Endpoint.parse(dying.address())))
                .isZero();
        assertThat(router.router.pool().statuses())
                .allSatisfy(status -> assertThat(status.metrics().waitingRequests())
                        .as("own requests left on " + status.endpoint())
                        .isZero());
    }

    @Test
    void concurrentRequestsRetriedAfterADroppedConnectionAreEachBookedOnceWhereServed() throws Exception {
        FakeModelServer dying = server("dying", FakeModelServer.page(0, 0.1, "sql"));
        FakeModelServer other = server("other", FakeModelServer.page(0, 0.1));
        RouterHarness router = router(RouterConfig.DEFAULT, dying, other);
        router.awaitReady(2);
        dying.hangUpOnCompletions = true;
        int threads = 8;
        int perThread = 5;
        ExecutorService clients = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<String>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(clients.submit(() -> {
                    List<String> served = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        HttpResponse<String> response = router.complete("sql");
                        served.add(response.statusCode() + " " + servedBy(response));
                    }
                    return served;
                }));
            }
            for (Future<List<String>> result : results) {
                assertThat(result.get(60, TimeUnit.SECONDS)).containsOnly("200 other");
            }
        } finally {
            clients.shutdownNow();
        }
        assertThat(dying.completions.get()).as("requests tried there first").isPositive();
        assertThat(other.completions.get()).isEqualTo(threads * perThread);
        String metrics = router.get("/metrics").body();
        assertThat(metrics)
                .contains("patchbay_router_picks_total{endpoint=\"" + other.address() + "\"} " + threads * perThread
                        + ".0");
        assertThat(metrics).doesNotContain("patchbay_router_picks_total{endpoint=\"" + dying.address() + "\"}");
        for (FakeModelServer server : List.of(dying, other)) {
            assertThat(router.router.pool().promptTokensInFlight(Endpoint.parse(server.address())))
                    .isZero();
        }
        assertThat(router.router.pool().statuses()).allSatisfy(status -> {
            assertThat(status.metrics().waitingRequests())
                    .as("own requests left on " + status.endpoint())
                    .isZero();
            assertThat(status.metrics().runningRequests())
                    .as("own requests left on " + status.endpoint())
                    .isZero();
        });
    }

    @Test
    void aRequestWhoseOnlyServerDropsTheConnectionGets502() throws Exception {
        FakeModelServer dying = server("dying", FakeModelServer.page(0, 0.1, "sql"));
        RouterHarness router = router(RouterConfig.DEFAULT, dying);
        router.awaitReady(1);
        dying.hangUpOnCompletions = true;
        HttpResponse<String> response = router.complete("sql");
        assertThat(response.statusCode()).isEqualTo(502);
        JsonNode error = JSON.readTree(response.body()).path("error");
        assertThat(error.path("code").asText()).isEqualTo("upstream_failed");
        assertThat(error.path("message").asText()).contains(dying.address()).contains("before answering");
        assertThat(dying.completions.get()).isEqualTo(1);
    }

    static Stream<Arguments> pagesThatDoNotShowTheLoad() {
        String good = FakeModelServer.page(0, 0.1);
        return Stream.of(
                Arguments.of("an empty page", "", "missing_family"),
                Arguments.of("no KV-cache usage", withoutFamily(good, "vllm:kv_cache_usage_perc"), "missing_family"),
                Arguments.of("waiting NaN", withValue(good, "vllm:num_requests_waiting", "NaN"), "invalid_value"),
                Arguments.of("negative KV usage", withValue(good, "vllm:kv_cache_usage_perc", "-0.4"), "invalid_value"),
                Arguments.of("negative running", withValue(good, "vllm:num_requests_running", "-2"), "invalid_value"));
    }

    private static String withValue(String page, String family, String value) {
        return page.replaceAll("(?m)^(" + Pattern.quote(family) + "\\{[^}]*}) .*$", "$1 " + value);
    }

    private static String withoutFamily(String page, String family) {
        return page.replaceAll("(?m)^" + Pattern.quote(family) + "\\{.*\n", "");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pagesThatDoNotShowTheLoad")
    void aServerWhosePageDoesNotShowItsLoadGetsNoTraffic(String what, String page, String reason) throws Exception {
        assertThat(page).as("the case changes the page").isNotEqualTo(FakeModelServer.page(0, 0.1));
        // The good server is busy: read as zeros, the other page would look better and draw the traffic.
        FakeModelServer good = server("good", FakeModelServer.page(3, 0.5));
        FakeModelServer unknown = server("unknown", page);
        RouterHarness router = router(RouterConfig.DEFAULT, good, unknown);
        String failures = "patchbay_router_scrape_failures_total{endpoint=\"" + unknown.address() + "\",reason=\""
                + reason + "\"}";
        RouterHarness.await(
                "a scrape failure counted as " + reason,
                () -> metricsPage(router).contains(failures));
        router.awaitReady(1);
        for (int i = 0; i < 20; i++) {
            HttpResponse<String> response = router.complete("base");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(servedBy(response)).isEqualTo("good");
        }
        assertThat(unknown.completions.get()).isZero();
        assertThat(metricsPage(router))
                .contains("patchbay_router_endpoint_ready{endpoint=\"" + unknown.address() + "\"} 0.0")
                .contains("patchbay_router_endpoint_ready{endpoint=\"" + good.address() + "\"} 1.0");
    }

    private static String metricsPage(RouterHarness router) {
        try {
            return router.get("/metrics").body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void whenEveryScrapeIsLateTheLastGoodDataIsRoutedOnAndCounted() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        FakeModelServer b = server("b", FakeModelServer.page(0, 0.1, "sql"));
        RouterHarness router = new RouterHarness(
                RouterConfig.DEFAULT,
                Duration.ofMillis(25),
                Duration.ofMillis(200),
                Duration.ofHours(1),
                List.of(a.address(), b.address()));
        toClose.add(router);
        router.awaitReady(2);
        CountDownLatch stalled = new CountDownLatch(1);
        a.metricsGate = stalled;
        b.metricsGate = stalled;
        try {
            RouterHarness.await(
                    "every endpoint's data stale",
                    () -> router.router.pool().candidates(e -> true).stale());
            for (int i = 0; i < 10; i++) {
                assertThat(router.complete("sql").statusCode()).isEqualTo(200);
            }
            RouterHarness.await(
                    "a scrape counted as timed out",
                    () -> metricsPage(router)
                            .contains("patchbay_router_scrape_failures_total{endpoint=\"" + a.address()
                                    + "\",reason=\"timeout\"}"));
            assertThat(metricsPage(router)).contains("patchbay_router_stale_data_picks_total 10.0");
        } finally {
            stalled.countDown();
        }
        a.metricsGate = null;
        b.metricsGate = null;
        RouterHarness.await(
                "fresh data again",
                () -> !router.router.pool().candidates(e -> true).stale()
                        && router.router.pool().readyStates().size() == 2);
        assertThat(router.complete("sql").statusCode()).isEqualTo(200);
        assertThat(metricsPage(router)).contains("patchbay_router_stale_data_picks_total 10.0");
        assertThat(a.completions.get() + b.completions.get()).isEqualTo(11);
    }

    @Test
    void badRequestsGetOpenAiShaped400s() throws Exception {
        FakeModelServer server = server("s", FakeModelServer.page(0, 0.1, "sql"));
        RouterHarness router = router(RouterConfig.parse("{\"adapters\": [\"sql\", \"chat\"]}"), server);
        router.awaitReady(1);
        for (String body :
                List.of("{\"prompt\":\"no model\"}", "not json", "[1,2]", "{\"model\": 7}", "{\"model\": \" \"}")) {
            HttpResponse<String> response = router.post("/v1/completions", body);
            assertThat(response.statusCode()).as(body).isEqualTo(400);
            JsonNode error = JSON.readTree(response.body()).path("error");
            assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
        }
        HttpResponse<String> unknown = router.complete("typo");
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(unknown.body()).path("error").path("code").asText())
                .isEqualTo("model_not_found");
        assertThat(JSON.readTree(unknown.body()).path("error").path("param").asText())
                .isEqualTo("model");
        // the base model, a configured adapter not loaded anywhere, and a loaded one all pass
        assertThat(router.complete("base").statusCode()).isEqualTo(200);
        assertThat(router.complete("chat").statusCode()).isEqualTo(200);
        assertThat(router.complete("sql").statusCode()).isEqualTo(200);
        assertThat(server.models).containsExactly("base", "chat", "sql");
    }

    @Test
    void unlistedAdaptersAreForwardedWhenTheListIsOpen() throws Exception {
        FakeModelServer server = server("s", FakeModelServer.page(0, 0.1));
        RouterHarness router = router(RouterConfig.DEFAULT, server);
        router.awaitReady(1);
        assertThat(router.complete("not-loaded-yet").statusCode()).isEqualTo(200);
        assertThat(server.models).containsExactly("not-loaded-yet");
    }

    @Test
    void sheddableRequestsGet429WhenEveryServerIsSaturated() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(8, 0.9, "sql"));
        FakeModelServer b = server("b", FakeModelServer.page(6, 0.85));
        RouterHarness router = router(RouterConfig.parse("{\"objectives\": {\"batch\": -1, \"chat\": 1}}"), a, b);
        router.awaitReady(2);
        String body = "{\"model\":\"sql\",\"prompt\":\"hi\"}";
        HttpResponse<String> shed = router.post("/v1/completions", body, RequestLifecycle.SHEDDABLE_HEADER, "true");
        assertThat(shed.statusCode()).isEqualTo(429);
        assertThat(JSON.readTree(shed.body()).path("error").path("code").asText())
                .isEqualTo("pool_saturated");
        assertThat(router.post("/v1/completions", body, RequestLifecycle.OBJECTIVE_HEADER, "batch")
                        .statusCode())
                .isEqualTo(429);
        assertThat(router.post("/v1/completions", body, RequestLifecycle.OBJECTIVE_HEADER, "chat")
                        .statusCode())
                .isEqualTo(200);
        assertThat(router.post("/v1/completions", body).statusCode()).isEqualTo(200);

        b.metricsPage = FakeModelServer.page(2, 0.85);
        RouterHarness.await(
                "b unsaturated",
                () -> router.router.pool().readyStates().stream()
                        .anyMatch(s -> s.metrics().waitingRequests() == 2));
        HttpResponse<String> served = router.post("/v1/completions", body, RequestLifecycle.SHEDDABLE_HEADER, "true");
        assertThat(served.statusCode()).isEqualTo(200);
    }

    @Test
    void rewritesSpreadAPublicNameOverAdapters() throws Exception {
        FakeModelServer server = server("s", FakeModelServer.page(0, 0.1, "v1", "v2"));
        RouterHarness router = router(RouterConfig.parse("""
                {"seed": 5, "rewrites": [{"model": "public", "targets": [{"model": "v1", "weight": 3}, {"model": "v2", "weight": 1}]}]}
                """), server);
        router.awaitReady(1);
        for (int i = 0; i < 200; i++) {
            assertThat(router.complete("public").statusCode()).isEqualTo(200);
        }
        long v2 = server.models.stream().filter("v2"::equals).count();
        assertThat(server.models).containsOnly("v1", "v2");
        assertThat(v2).isBetween(25L, 75L);
    }

    @Test
    void forwardsModelListAndChatCompletions() throws Exception {
        FakeModelServer server = server("s", FakeModelServer.page(0, 0.1));
        RouterHarness router = router(RouterConfig.DEFAULT, server);
        router.awaitReady(1);
        HttpResponse<String> models = router.get("/v1/models");
        assertThat(models.statusCode()).isEqualTo(200);
        assertThat(servedBy(models)).isEqualTo("s");
        HttpResponse<String> chat = router.post("/v1/chat/completions", "{\"model\":\"base\",\"messages\":[]}");
        assertThat(chat.statusCode()).isEqualTo(200);
        assertThat(chat.headers().firstValue(ProxyHandler.DESTINATION_HEADER)).contains(server.address());
    }

    @Test
    void routerMetricsCountPicksPlacementsAndScrapes() throws Exception {
        FakeModelServer server = server("s", FakeModelServer.page(0, 0.1, "sql"));
        RouterHarness router = router(RouterConfig.DEFAULT, server);
        router.awaitReady(1);
        router.complete("sql");
        router.complete("other");
        router.complete("base");
        String metrics = router.get("/metrics").body();
        assertThat(metrics).contains("patchbay_router_picks_total{endpoint=\"" + server.address() + "\"} 3");
        assertThat(metrics).contains("patchbay_router_adapter_placement_total{placement=\"in_slot\"} 1");
        assertThat(metrics).contains("patchbay_router_adapter_placement_total{placement=\"neither\"} 1");
        assertThat(metrics).contains("patchbay_router_adapter_placement_total{placement=\"base_model\"} 1");
        assertThat(metrics)
                .contains("patchbay_router_endpoint_data_age_seconds{endpoint=\"" + server.address() + "\"}");
        assertThat(metrics).contains("patchbay_router_proxy_latency_seconds_count 3");
    }

    @Test
    void concurrentClientsAreAllServed() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        FakeModelServer b = server("b", FakeModelServer.page(0, 0.1, "sql"));
        RouterHarness router = router(RouterConfig.DEFAULT, a, b);
        router.awaitReady(2);
        int threads = 8;
        int perThread = 25;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    int ok = 0;
                    for (int i = 0; i < perThread; i++) {
                        boolean stream = i % 2 == 0;
                        HttpResponse<String> response = router.post(
                                "/v1/completions", "{\"model\":\"sql\",\"prompt\":\"x\",\"stream\":" + stream + "}");
                        if (response.statusCode() == 200
                                && (!stream || response.body().endsWith("data: [DONE]\n\n"))) {
                            ok++;
                        }
                    }
                    return ok;
                }));
            }
            int ok = 0;
            for (Future<Integer> f : results) {
                ok += f.get(60, TimeUnit.SECONDS);
            }
            assertThat(ok).isEqualTo(threads * perThread);
        } finally {
            pool.shutdownNow();
        }
        assertThat(a.completions.get() + b.completions.get()).isEqualTo(threads * perThread);
        assertThat(router.router.pool().promptTokensInFlight(Endpoint.parse(a.address())))
                .isZero();
        assertThat(router.router.pool().promptTokensInFlight(Endpoint.parse(b.address())))
                .isZero();
        assertThat(a.completions.get()).isPositive();
        assertThat(b.completions.get()).isPositive();
    }

    @Test
    void routesOverAServerWithOnlyVllmsFullPage() throws Exception {
        String page;
        try (InputStream in = ProxyTest.class.getResourceAsStream("/pages/vllm-full.txt")) {
            page = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        FakeModelServer vllm = server("vllm", page);
        for (String profile : List.of("patchbay", "gie-lora")) {
            RouterHarness router = router(RouterConfig.parse("{\"profile\": \"" + profile + "\"}"), vllm);
            router.awaitReady(1);
            assertThat(router.complete("meta-llama/Llama-3.1-8B-Instruct").statusCode())
                    .as(profile)
                    .isEqualTo(200);
            assertThat(router.complete("sql-lora").statusCode()).as(profile).isEqualTo(200);
        }
        assertThat(vllm.models)
                .containsExactly(
                        "meta-llama/Llama-3.1-8B-Instruct", "sql-lora", "meta-llama/Llama-3.1-8B-Instruct", "sql-lora");
    }

    @Test
    void serverWithAMalformedPageGetsNoRequestsUntilItIsFixed() throws Exception {
        FakeModelServer server = server("s", "vllm:num_requests_waiting{model_name=\"base} 1\n");
        RouterHarness router = router(RouterConfig.DEFAULT, server);
        RouterHarness.await(
                "a failed scrape",
                () -> router.router.pool().statuses().getFirst().lastError() != null);
        assertThat(router.complete("sql").statusCode()).isEqualTo(503);
        assertThat(router.get("/metrics").body())
                .containsPattern("patchbay_router_scrape_failures_total\\{endpoint=\"" + server.address()
                        + "\",reason=\"malformed\"} [1-9]");
        server.metricsPage = FakeModelServer.page(0, 0.1);
        router.awaitReady(1);
        assertThat(router.complete("sql").statusCode()).isEqualTo(200);
        assertThat(server.completions.get()).isEqualTo(1);
    }
}
