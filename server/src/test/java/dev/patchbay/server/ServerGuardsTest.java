package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.testkit.Await;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerGuardsTest {
    @TempDir
    Path dir;

    private static final String SMALL = "{\"model\":\"test-model\",\"prompt\":\"hi\",\"max_tokens\":2}";

    @Test
    void apiKeyGuardsV1RoutesOnly() throws Exception {
        try (ServerHarness h = new ServerHarness(dir, List.of(), "--api-key", "s3cret")) {
            assertThat(h.post("/v1/completions", SMALL).statusCode()).isEqualTo(401);
            assertThat(h.post("/v1/completions", SMALL, "Authorization", "Bearer wrong")
                            .statusCode())
                    .isEqualTo(401);
            assertThat(h.post("/v1/completions", SMALL, "Authorization", "Bearer s3cret")
                            .statusCode())
                    .isEqualTo(200);
            HttpResponse<String> unauthorized = h.get("/v1/models");
            assertThat(unauthorized.statusCode()).isEqualTo(401);
            assertThat(ServerHarness.json(unauthorized)
                            .get("error")
                            .get("message")
                            .asText())
                    .contains("Unauthorized");
            assertThat(h.get("/health").statusCode()).isEqualTo(200);
            assertThat(h.get("/metrics").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void adapterAdminNeedsRuntimeUpdating() throws Exception {
        try (ServerHarness h = new ServerHarness(dir, List.of("a"), "--enable-lora")) {
            var r = h.post("/v1/load_lora_adapter", "{\"lora_name\":\"b\",\"lora_path\":\"" + dir + "\"}");
            assertThat(r.statusCode()).isEqualTo(404);
        }
    }

    @Test
    void fullQueueAnswers429AndNothingIsLost() throws Exception {
        try (ServerHarness h = new ServerHarness(
                dir,
                List.of(),
                "--max-num-seqs",
                "1",
                "--max-waiting-requests",
                "2",
                "--sim-latency-ms",
                "2,0,0,0,0,0")) {
            ExecutorService pool = Executors.newFixedThreadPool(12);
            List<Future<HttpResponse<String>>> futures = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                futures.add(pool.submit(() -> h.post(
                        "/v1/completions",
                        "{\"model\":\"test-model\",\"prompt\":\"hi\",\"max_tokens\":40,\"ignore_eos\":true}")));
            }
            int ok = 0, tooMany = 0;
            for (Future<HttpResponse<String>> f : futures) {
                HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
                if (r.statusCode() == 200) ok++;
                else if (r.statusCode() == 429) {
                    tooMany++;
                    assertThat(ServerHarness.json(r).get("error").get("message").asText())
                            .contains("queue is full");
                }
            }
            pool.shutdown();
            assertThat(ok + tooMany).isEqualTo(12);
            assertThat(ok).isPositive();
            assertThat(tooMany).isPositive();
            // The last answer can leave before its step's snapshot is published: wait for it.
            int answered = ok;
            Await.until(
                    "every answer in the snapshot",
                    () -> h.server.engine().snapshot().counters().finished().total() >= answered);
            assertThat(h.server.engine().snapshot().counters().finished().total())
                    .isEqualTo(ok);
        }
    }

    @Test
    void gracefulStopFinishesInFlightRequestsAndRefusesNewOnes() throws Exception {
        ServerHarness h = new ServerHarness(dir, List.of(), "--sim-latency-ms", "5,0,0,0,0,0");
        CompletableFuture<HttpResponse<String>> inFlight = CompletableFuture.supplyAsync(() -> {
            try {
                return h.post(
                        "/v1/completions",
                        "{\"model\":\"test-model\",\"prompt\":\"hi\",\"max_tokens\":200,\"ignore_eos\":true}");
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Await.until(
                "the long request running", () -> h.server.engine().snapshot().numRunning() > 0);
        CompletableFuture<Void> stopping =
                CompletableFuture.runAsync(() -> h.server.stopGracefully(Duration.ofSeconds(30)));
        // The long request (200 steps) is still running: the server is draining, not gone.
        Await.until("health says draining", () -> health(h) == 503);
        HttpResponse<String> refused = h.post("/v1/completions", SMALL);
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(h.get("/health").statusCode()).isEqualTo(503);
        HttpResponse<String> done = inFlight.get(30, TimeUnit.SECONDS);
        assertThat(done.statusCode()).isEqualTo(200);
        assertThat(ServerHarness.json(done)
                        .get("usage")
                        .get("completion_tokens")
                        .asInt())
                .isEqualTo(200);
        stopping.get(30, TimeUnit.SECONDS);
    }

    @Test
    void resolverLoadsUnknownAdaptersFromItsDirectory() throws Exception {
        Path resolverDir = dir.resolve("resolver");
        ServerHarness.writeAdapter(resolverDir, "delta");
        try (ServerHarness h =
                new ServerHarness(dir, List.of(), "--enable-lora", "--lora-resolver-dir", resolverDir.toString())) {
            var r = h.post("/v1/completions", "{\"model\":\"delta\",\"prompt\":\"hi\",\"max_tokens\":2}");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(h.get("/v1/models").body()).contains("\"delta\"");
            assertThat(h.post("/v1/completions", "{\"model\":\"missing\",\"prompt\":\"hi\"}")
                            .statusCode())
                    .isEqualTo(404);
            assertThat(h.post("/v1/completions", "{\"model\":\"../resolver/delta\",\"prompt\":\"hi\"}")
                            .statusCode())
                    .isEqualTo(404);
        }
    }

    @Test
    void anAdapterWhoseWeightsVanishedFailsWith500AndTheServerKeepsServing() throws Exception {
        try (ServerHarness h = new ServerHarness(
                dir, List.of("gone", "keep"), "--enable-lora", "--max-loras", "1", "--max-cpu-loras", "1")) {
            // Host memory holds one adapter: "gone" was evicted by "keep" at start-up and must come from storage.
            Files.delete(dir.resolve("gone").resolve("adapter_model.safetensors"));
            HttpResponse<String> r =
                    h.post("/v1/completions", "{\"model\":\"gone\",\"prompt\":\"hi\",\"max_tokens\":2}");
            assertThat(r.statusCode()).isEqualTo(500);
            assertThat(ServerHarness.json(r).get("error").get("message").asText())
                    .contains("Adapter 'gone' failed to load")
                    .contains("missing or truncated");
            assertThat(h.post("/v1/completions", "{\"model\":\"keep\",\"prompt\":\"hi\",\"max_tokens\":2}")
                            .statusCode())
                    .isEqualTo(200);
            assertThat(h.server.engine().snapshot().counters().finished().error())
                    .isEqualTo(1);
        }
    }

    @Test
    void aRequestThatAsksForASlotIsRefusedWhenNoneCanBeHadAndTheServerKeepsServing() throws Exception {
        try (ServerHarness h = new ServerHarness(
                dir, List.of("one", "two"), "--enable-lora", "--max-loras", "1", "--sim-latency-ms", "20,0,0,0,0,0")) {
            CompletableFuture<HttpResponse<String>> holdingTheSlot = CompletableFuture.supplyAsync(() -> {
                try {
                    return h.post("/v1/completions", "{\"model\":\"one\",\"prompt\":\"hi\",\"max_tokens\":250}");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Await.until(
                    "one runs in the only slot",
                    () -> h.server.engine().snapshot().lora().runningAdapters().contains("one"));

            HttpResponse<String> refused = h.post(
                    "/v1/completions",
                    "{\"model\":\"two\",\"prompt\":\"hi\",\"max_tokens\":2}",
                    "X-Patchbay-Require-Slot",
                    "true");
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.headers().firstValue("x-patchbay-slot-refused")).hasValue("true");
            assertThat(ServerHarness.json(refused).get("error").get("type").asText())
                    .isEqualTo("ServiceUnavailableError");
            assertThat(ServerHarness.json(refused).get("error").get("message").asText())
                    .contains("'two'");

            // Behind Envoy: "3" asks for a slot on the first two of three attempts only.
            HttpResponse<String> refusedBeforeTheLastAttempt = h.post(
                    "/v1/completions",
                    "{\"model\":\"two\",\"prompt\":\"hi\",\"max_tokens\":2}",
                    "X-Patchbay-Require-Slot",
                    "3",
                    "X-Envoy-Attempt-Count",
                    "2");
            assertThat(refusedBeforeTheLastAttempt.statusCode()).isEqualTo(503);
            assertThat(refusedBeforeTheLastAttempt.headers().firstValue("x-patchbay-slot-refused"))
                    .hasValue("true");
            CompletableFuture<HttpResponse<String>> lastAttempt = postAsync(
                    h,
                    "{\"model\":\"two\",\"prompt\":\"hi\",\"max_tokens\":2}",
                    "X-Patchbay-Require-Slot",
                    "3",
                    "X-Envoy-Attempt-Count",
                    "3");
            CompletableFuture<HttpResponse<String>> noAttemptCount = postAsync(
                    h, "{\"model\":\"two\",\"prompt\":\"hi\",\"max_tokens\":2}", "X-Patchbay-Require-Slot", "3");
            Await.until(
                    "the last attempt and the uncounted one wait for the slot",
                    () -> h.server.engine().snapshot().numWaiting() == 2);

            HttpResponse<String> joins = h.post(
                    "/v1/completions",
                    "{\"model\":\"one\",\"prompt\":\"hi\",\"max_tokens\":2}",
                    "X-Patchbay-Require-Slot",
                    "true");
            assertThat(joins.statusCode()).as("its adapter is in the slot").isEqualTo(200);
            HttpResponse<String> waits =
                    h.post("/v1/completions", "{\"model\":\"two\",\"prompt\":\"hi\",\"max_tokens\":2}");
            assertThat(waits.statusCode())
                    .as("without the header it waits for the slot")
                    .isEqualTo(200);
            assertThat(holdingTheSlot.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            assertThat(lastAttempt.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            assertThat(noAttemptCount.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            // The refused requests were never accepted: the engine counts the five others only.
            Await.until(
                    "every answer counted",
                    () -> h.server.engine().snapshot().counters().finished().total() == 5);
        }
    }

    @Test
    void badFlagsGiveOneClearLine() {
        Assertions.assertThatThrownBy(() -> ServeCommand.parse("--sim-text", "poetry"))
                .hasMessage("--sim-text must be random or echo, got poetry");
        Assertions.assertThatThrownBy(() -> ServeCommand.parse("--lora-modules", "{\"name\":\"x\"}", "--enable-lora"))
                .hasMessageContaining("Invalid fields for --lora-modules");
        Assertions.assertThatThrownBy(() -> PatchbayServer.start(ServeCommand.parse(
                        "--max-loras", "4", "--max-cpu-loras", "2", "--demo-adapters", "0", "--port", "0")))
                .hasMessage("max_cpu_loras (2) must be >= max_loras (4)");
    }

    private static CompletableFuture<HttpResponse<String>> postAsync(ServerHarness h, String body, String... headers) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return h.post("/v1/completions", body, headers);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private static int health(ServerHarness h) {
        try {
            return h.get("/health").statusCode();
        } catch (Exception e) {
            throw new AssertionError("the server stopped before its long request finished", e);
        }
    }
}
