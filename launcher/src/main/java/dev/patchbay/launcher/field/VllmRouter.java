package dev.patchbay.launcher.field;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The vLLM project's router ({@code vllm-router}, PyPI's wheel, installed by {@code scripts/third-party.sh python})
 * over a fixed list of model servers. It knows nothing of adapters: it picks a worker by its policy alone and forwards
 * the request with the client's {@code model} (see docs/gateway.md for what it does to the body).
 */
public final class VllmRouter implements AutoCloseable {
    static final Duration START_LIMIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The policies a front is run with; vllm-router has more, which need what Patchbay's servers do not serve. */
    public enum Policy {
        ROUND_ROBIN,
        /** Its default: the worker whose past requests share the longest prefix with this one, within load bounds. */
        CACHE_AWARE,
        RANDOM;

        /** The name {@code --policy} takes. */
        public String flag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final ChildProcess process;
    private final Policy policy;
    private final int port;
    private final int prometheusPort;

    private VllmRouter(ChildProcess process, Policy policy, int port, int prometheusPort) {
        this.process = process;
        this.policy = policy;
        this.port = port;
        this.prometheusPort = prometheusPort;
    }

    /** Starts vllm-router ({@link FieldTools#require}) with {@code policy} over {@code workers}. */
    public static VllmRouter start(Policy policy, List<Endpoint> workers, Path dir)
            throws IOException, InterruptedException {
        return start(FieldTools.require("vllm-router"), policy, workers, dir);
    }

    /**
     * Starts {@code binary} with {@code policy} over {@code workers} on free loopback ports, its log
     * ({@code vllm-router.log}) in a new directory under {@code dir}, and returns once its {@code /readiness} counts
     * every worker healthy. It waits itself until a worker answers {@code GET /health} before it listens.
     */
    public static VllmRouter start(Path binary, Policy policy, List<Endpoint> workers, Path dir)
            throws IOException, InterruptedException {
        if (workers.isEmpty()) {
            throw new IllegalArgumentException("vllm-router needs at least one worker");
        }
        Path home = Files.createTempDirectory(Files.createDirectories(dir), "vllm-router-" + policy.flag() + "-");
        return FreePort.retryIfTaken(() -> {
            int port = FreePort.any();
            int prometheusPort = FreePort.any();
            ChildProcess process = ChildProcess.start(
                    "vllm-router (" + policy.flag() + ")",
                    command(binary, policy, workers, "127.0.0.1", port, prometheusPort),
                    home.resolve("vllm-router.log"));
            try (HttpClient http = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(2))
                    .build()) {
                process.awaitTrue(
                        "count all " + workers.size() + " workers healthy on " + port,
                        START_LIMIT,
                        () -> healthyWorkers(http, port) == workers.size());
            } catch (IOException | InterruptedException | RuntimeException e) {
                process.close();
                throw e;
            }
            return new VllmRouter(process, policy, port, prometheusPort);
        });
    }

    /** vllm-router's command line. */
    public static List<String> command(
            Path binary, Policy policy, List<Endpoint> workers, String host, int port, int prometheusPort) {
        List<String> command = new ArrayList<>(List.of(binary.toString(), "--worker-urls"));
        for (Endpoint worker : workers) {
            command.add("http://" + worker.address());
        }
        command.addAll(List.of(
                "--policy",
                policy.flag(),
                "--host",
                host,
                "--port",
                Integer.toString(port),
                // Its default, 29000, would be shared by every router on the machine: the second one to start
                // panics on the taken port.
                "--prometheus-port",
                Integer.toString(prometheusPort),
                "--prometheus-host",
                "127.0.0.1"));
        return command;
    }

    /** The {@code healthy_workers} its {@code /readiness} reports; -1 while it does not answer 200. */
    private static int healthyWorkers(HttpClient http, int port) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readiness"))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            return -1;
        }
        JsonNode body = JSON.readTree(r.body());
        return body.path("healthy_workers").asInt(-1);
    }

    public Policy policy() {
        return policy;
    }

    /** Its HTTP port on 127.0.0.1: the OpenAI API clients call. */
    public int port() {
        return port;
    }

    public URI uri() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** Its Prometheus page's port ({@code vllm_router_*} families). */
    public int prometheusPort() {
        return prometheusPort;
    }

    public ChildProcess process() {
        return process;
    }

    @Override
    public void close() {
        process.close();
    }
}
