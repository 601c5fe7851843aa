package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.testkit.Await;
import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real Prometheus server scrapes Patchbay and answers PromQL about per-adapter requests. */
class PrometheusServerTest {

    @TempDir
    Path dir;

    @Test
    void prometheusScrapesPerAdapterRunningRequests() throws Exception {
        Path prometheus = RequiredTool.onPath("prometheus", "Debian package 'prometheus'");
        try (ServerHarness h = new ServerHarness(
                dir, List.of("red", "blue"), "--enable-lora", "--max-loras", "2", "--sim-latency-ms", "20,0,0,0,0,0")) {
            // Long requests keep both adapters running across several scrapes.
            CompletableFuture<?>[] load = new CompletableFuture<?>[4];
            for (int i = 0; i < load.length; i++) {
                String model = i % 2 == 0 ? "red" : "blue";
                load[i] = CompletableFuture.runAsync(() -> {
                    try {
                        h.post(
                                "/v1/completions",
                                "{\"model\":\"" + model
                                        + "\",\"prompt\":\"hi\",\"max_tokens\":600,\"ignore_eos\":true}");
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
            }
            int promPort = freePort();
            Path config = Files.writeString(dir.resolve("prometheus.yml"), """
                    global:
                      scrape_interval: 1s
                    scrape_configs:
                      - job_name: patchbay
                        static_configs:
                          - targets: ['127.0.0.1:%d']
                    """.formatted(h.server.port()));
            Process prom = new ProcessBuilder(
                            prometheus.toString(),
                            "--config.file=" + config,
                            "--storage.tsdb.path=" + dir.resolve("tsdb"),
                            "--web.listen-address=127.0.0.1:" + promPort)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("prometheus.log").toFile())
                    .start();
            try {
                Set<String> adapters = new HashSet<>();
                Await.until(
                        "prometheus sees both adapters running",
                        () -> {
                            JsonNode r =
                                    queryOrNull(promPort, "max by (lora_name) (vllm:num_lora_requests_running) > 0");
                            if (r != null) {
                                for (JsonNode series : r.path("data").path("result")) {
                                    adapters.add(series.path("metric")
                                            .path("lora_name")
                                            .asText());
                                }
                            }
                            return adapters.size() >= 2;
                        },
                        () -> adapters);
                assertThat(adapters)
                        .as("prometheus log: " + Files.readString(dir.resolve("prometheus.log")))
                        .containsExactlyInAnyOrder("red", "blue");
                JsonNode up = query(promPort, "up{job=\"patchbay\"}");
                assertThat(up.path("data")
                                .path("result")
                                .get(0)
                                .path("value")
                                .get(1)
                                .asText())
                        .isEqualTo("1");
            } finally {
                prom.destroy();
                if (!prom.waitFor(10, TimeUnit.SECONDS)) prom.destroyForcibly();
            }
            CompletableFuture.allOf(load).get(60, TimeUnit.SECONDS);
        }
    }

    /** The query's answer, or null while Prometheus is not answering yet (the condition polls again). */
    private static JsonNode queryOrNull(int port, String promql) {
        try {
            return query(port, promql);
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    private static JsonNode query(int port, String promql) throws IOException, InterruptedException {
        try {
            HttpResponse<String> r = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/query?query="
                                            + URLEncoder.encode(promql, StandardCharsets.UTF_8)))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? ServerHarness.JSON.readTree(r.body()) : null;
        } catch (ConnectException e) {
            return null; // not listening yet
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
