package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.launcher.field.EnvoyFront;
import dev.patchbay.launcher.field.FieldFront;
import dev.patchbay.launcher.field.FieldTools;
import dev.patchbay.launcher.field.LlmdPicker;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.testkit.Await;
import dev.patchbay.testkit.RequiredTool;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The field's routers in front of three {@code patchbay serve} processes (started once for the class), each as
 * {@link FieldFront} starts it: llm-d's endpoint picker behind Envoy with its LoRA and its default profile,
 * vllm-router round robin and cache-aware, and Envoy alone. Whatever a front chooses, every request must come back
 * whole, and the servers' own counters must add up to what was sent. Then llm-d's LoRA profile is seen to read where
 * an adapter runs from the servers' metrics and to send that adapter's requests there.
 */
class FieldFrontsTest {
    static final List<String> ADAPTERS = List.of("a0", "a1", "a2", "a3");
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    @TempDir
    static Path dir;

    static final LauncherProcesses processes = new LauncherProcesses();
    static final List<Endpoint> servers = new ArrayList<>();
    static String baseModel;

    @BeforeAll
    static void startTheServers() throws Exception {
        SimAdapterServer server =
                new SimAdapterServer("field", dir, ADAPTERS, 2, 4, SimAdapterServer.SIM_LATENCY_MS).writeAdapters();
        List<LauncherProcesses.Launched> launched = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            launched.add(processes.launch(server.serveCommand(0)));
        }
        for (LauncherProcesses.Launched s : launched) {
            servers.add(new Endpoint("127.0.0.1", LauncherProcesses.port(s, LauncherProcesses.SERVING)));
        }
        baseModel = JSON.readTree(processes.get(servers.getFirst().port(), "/v1/models"))
                .path("data")
                .path(0)
                .path("id")
                .asText();
    }

    /** Each test leaves the servers idle, so that the next one counts only its own requests. */
    @AfterEach
    void awaitServersIdle() {
        Await.until("every server is idle", EnvoyGatewayTest.unchecked(() -> {
            for (Endpoint server : servers) {
                if (processes.sample(server.port(), "vllm:num_requests_running", "")
                                + processes.sample(server.port(), "vllm:num_requests_waiting", "")
                        != 0) {
                    return false;
                }
            }
            return true;
        }));
    }

    @AfterAll
    static void stop() throws InterruptedException {
        processes.close();
    }

    @ParameterizedTest
    @EnumSource(FieldFront.class)
    void everyRequestComesBackWholeAndTheServersCountEachOnce(FieldFront kind) throws Exception {
        try (FieldFront.Running front = start(kind)) {
            System.out.println("front: " + front);
            List<String> models = new ArrayList<>(ADAPTERS);
            models.add(baseModel);
            Map<String, Double> before = served();

            int sent = exchange(front.port(), models);

            Map<String, Double> expected = new HashMap<>(before);
            expected.merge("all", (double) sent, Double::sum);
            for (String adapter : ADAPTERS) {
                expected.merge(adapter, (double) sent / models.size(), Double::sum);
            }
            // A streamed answer ends at the client a moment before its server counts it.
            Await.until(
                    "the servers count " + sent + " more requests",
                    EnvoyGatewayTest.unchecked(() -> served().get("all") >= expected.get("all")),
                    () -> safe(FieldFrontsTest::served));
            assertThat(served()).as("requests served, all and by adapter").isEqualTo(expected);
        }
    }

    /**
     * With an adapter running on one server (a long request sent to it directly), llm-d's LoRA profile must see it
     * there in that server's {@code vllm:lora_requests_info} and send the adapter's requests to it. What epp saw is
     * read from its own log (verbosity 4 logs each request's candidates as scraped, with their scores).
     */
    @Test
    void llmdsLoraProfileSeesWhereAnAdapterRunsAndSendsItsRequestsThere() throws Exception {
        Path epp = tool("llm-d-epp");
        Path envoy = tool("envoy");
        Endpoint home = servers.get(1);
        String adapter = "a3";
        try (LlmdPicker picker = LlmdPicker.start(epp, LlmdPicker.Profile.LORA, servers, dir, 4);
                EnvoyFront front = EnvoyFront.forPicker(envoy, picker, dir);
                EnvoyGatewayTest.HeldStream running = EnvoyGatewayTest.HeldStream.open(
                        home.port(),
                        "{\"model\":\"" + adapter + "\",\"prompt\":\"the water is\",\"max_tokens\":8000,"
                                + "\"ignore_eos\":true,\"stream\":true}")) {
            running.readUntil("data: ");
            Await.until(
                    adapter + " runs on " + home,
                    EnvoyGatewayTest.unchecked(
                            () -> runningAdapters(home.port()).contains(adapter)));

            // Until epp has scraped the server since, its choice is a coin toss; once it has, it must choose it.
            List<String> seen = new ArrayList<>();
            Await.until(
                    "epp sees " + adapter + " running on " + home,
                    EnvoyGatewayTest.unchecked(() -> {
                        Endpoint chosen = sendOne(front.port(), adapter);
                        JsonNode view = lastCandidates(picker, adapter);
                        if (!activeOn(view, home).contains(adapter)) {
                            return false;
                        }
                        seen.add(summary(view));
                        assertThat(chosen)
                                .as("where epp sent " + adapter + " once it saw it on " + home)
                                .isEqualTo(home);
                        return true;
                    }),
                    () -> safe(() -> summary(lastCandidates(picker, adapter))));
            System.out.println("epp's view, scores and state per server: " + seen.getFirst());
            for (int i = 0; i < 5; i++) {
                assertThat(sendOne(front.port(), adapter))
                        .as("request " + i + " for " + adapter)
                        .isEqualTo(home);
            }
            JsonNode view = lastCandidates(picker, adapter);
            for (JsonNode candidate : view.path("endpoints-weighted-score")) {
                assertThat(candidate.path("Endpoint").path("MaxActiveModels").asInt())
                        .as("max_lora, read from vllm:lora_requests_info")
                        .isEqualTo(2);
            }
        }
    }

    // --- traffic ---------------------------------------------------------------------------------------------------

    /**
     * Every model, completions and chat, streamed and not, from 4 clients at once; each answer checked whole. Returns
     * how many were sent.
     */
    private static int exchange(int port, List<String> models) throws Exception {
        List<Request> requests = new ArrayList<>();
        for (String model : models) {
            for (boolean chat : List.of(false, true)) {
                for (boolean stream : List.of(false, true)) {
                    requests.add(new Request(model, chat, stream, 3 + requests.size() % 5));
                }
            }
        }
        try (ExecutorService clients = Executors.newFixedThreadPool(4)) {
            List<Future<?>> done = new ArrayList<>();
            for (Request request : requests) {
                done.add(clients.submit(() -> {
                    HttpResponse<String> r = http.send(request.http(port), HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).as(request + ": " + r.body()).isEqualTo(200);
                    request.check(r);
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(2, TimeUnit.MINUTES);
            }
        }
        return requests.size();
    }

    record Request(String model, boolean chat, boolean stream, int maxTokens) {
        HttpRequest http(int port) {
            String body = chat
                    ? "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],"
                            + "\"max_tokens\":" + maxTokens + ",\"ignore_eos\":true,\"stream\":" + stream + "}"
                    : "{\"model\":\"" + model + "\",\"prompt\":\"the water is\",\"max_tokens\":" + maxTokens
                            + ",\"ignore_eos\":true,\"stream\":" + stream + "}";
            return HttpRequest.newBuilder(URI.create(
                            "http://127.0.0.1:" + port + (chat ? "/v1/chat/completions" : "/v1/completions")))
                    .timeout(Duration.ofMinutes(1))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body))
                    .build();
        }

        /** The answer is one OpenAI object for this model (or a stream of them ending in [DONE]), with its text. */
        void check(HttpResponse<String> r) throws Exception {
            String type = r.headers().firstValue("content-type").orElse("");
            if (!stream) {
                assertThat(type).as(this + " content type").startsWith("application/json");
                JsonNode answer = JSON.readTree(r.body());
                assertThat(answer.path("object").asText()).isEqualTo(chat ? "chat.completion" : "text_completion");
                assertThat(answer.path("model").asText()).isEqualTo(model);
                JsonNode choice = answer.path("choices").path(0);
                String text = chat
                        ? choice.path("message").path("content").asText()
                        : choice.path("text").asText();
                assertThat(text).as(this + " text").isNotBlank();
                assertThat(choice.path("finish_reason").asText()).isEqualTo("length");
                assertThat(answer.path("usage").path("completion_tokens").asInt())
                        .isEqualTo(maxTokens);
                return;
            }
            assertThat(type).as(this + " content type").startsWith("text/event-stream");
            List<String> events = r.body()
                    .lines()
                    .filter(l -> l.startsWith("data: "))
                    .map(l -> l.substring("data: ".length()))
                    .toList();
            assertThat(events).as(this + " events").hasSizeGreaterThan(1);
            assertThat(events.getLast()).isEqualTo("[DONE]");
            StringBuilder text = new StringBuilder();
            int finished = 0;
            for (String event : events.subList(0, events.size() - 1)) {
                JsonNode chunk = JSON.readTree(event);
                assertThat(chunk.path("object").asText()).isEqualTo(chat ? "chat.completion.chunk" : "text_completion");
                assertThat(chunk.path("model").asText()).isEqualTo(model);
                JsonNode choice = chunk.path("choices").path(0);
                text.append(
                        chat
                                ? choice.path("delta").path("content").asText("")
                                : choice.path("text").asText(""));
                if (!choice.path("finish_reason").isNull()
                        && !choice.path("finish_reason").isMissingNode()) {
                    finished++;
                }
            }
            assertThat(text.toString()).as(this + " streamed text").isNotBlank();
            assertThat(finished).as(this + " chunks with a finish reason").isEqualTo(1);
        }
    }

    /** Sends one short completion for {@code model}; returns the server that answered it, by the servers' counters. */
    private static Endpoint sendOne(int port, String model) throws Exception {
        Map<Endpoint, Double> before = finishedByServer(model);
        Request request = new Request(model, false, false, 2);
        HttpResponse<String> r = http.send(request.http(port), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        request.check(r);
        Endpoint[] chosen = new Endpoint[1];
        Await.until("one server counts the request", EnvoyGatewayTest.unchecked(() -> {
            Map<Endpoint, Double> after = finishedByServer(model);
            List<Endpoint> counted = new ArrayList<>();
            for (Endpoint server : servers) {
                double more = after.get(server) - before.get(server);
                assertThat(more).as(server + " counted").isLessThanOrEqualTo(1);
                if (more == 1) {
                    counted.add(server);
                }
            }
            assertThat(counted).as("servers that counted it").hasSizeLessThanOrEqualTo(1);
            chosen[0] = counted.isEmpty() ? null : counted.getFirst();
            return chosen[0] != null;
        }));
        return chosen[0];
    }

    // --- what the servers say ----------------------------------------------------------------------------------------

    /** Over the three servers: requests finished ("all"), and requests finished for each adapter. */
    private static Map<String, Double> served() throws Exception {
        Map<String, Double> totals = new HashMap<>();
        for (Endpoint server : servers) {
            totals.merge("all", processes.sample(server.port(), "vllm:request_success_total", ""), Double::sum);
            for (String adapter : ADAPTERS) {
                totals.merge(
                        adapter,
                        processes.sample(server.port(), "vllm:lora_requests_total", "lora_name=\"" + adapter + "\""),
                        Double::sum);
            }
        }
        return totals;
    }

    /** Requests for {@code adapter} each server finished by length (what {@link #sendOne} sends). */
    private static Map<Endpoint, Double> finishedByServer(String adapter) throws Exception {
        Map<Endpoint, Double> finished = new HashMap<>();
        for (Endpoint server : servers) {
            finished.put(
                    server,
                    processes.sample(
                            server.port(),
                            "vllm:lora_requests_total",
                            "finished_reason=\"length\",lora_name=\"" + adapter + "\""));
        }
        return finished;
    }

    private static final Pattern RUNNING = Pattern.compile("running_lora_adapters=\"([^\"]*)\"");

    /** The adapters the server's newest {@code vllm:lora_requests_info} series lists as running. */
    private static List<String> runningAdapters(int port) throws Exception {
        double newest = Double.NEGATIVE_INFINITY;
        List<String> running = List.of();
        for (String line : processes.get(port, "/metrics").lines().toList()) {
            if (line.startsWith("vllm:lora_requests_info{")) {
                double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                Matcher m = RUNNING.matcher(line);
                if (value >= newest && m.find()) {
                    newest = value;
                    running = m.group(1).isEmpty()
                            ? List.of()
                            : List.of(m.group(1).split(","));
                }
            }
        }
        return running;
    }

    // --- what epp says -----------------------------------------------------------------------------------------------

    /** epp's newest "Candidate pods for picking" record for {@code model}: each server as scraped, and its score. */
    private static JsonNode lastCandidates(LlmdPicker picker, String model) throws Exception {
        List<String> lines = Files.readAllLines(picker.process().log());
        for (String line : lines.reversed()) {
            if (line.contains("\"Candidate pods for picking\"")
                    && line.contains("\"targetModelName\":\"" + model + "\"")) {
                return JSON.readTree(line);
            }
        }
        return JSON.createObjectNode();
    }

    /** The adapters epp's record shows active on {@code server}. */
    private static List<String> activeOn(JsonNode candidates, Endpoint server) {
        for (JsonNode candidate : candidates.path("endpoints-weighted-score")) {
            JsonNode endpoint = candidate.path("Endpoint");
            if (endpoint.path("Port").asText().equals(Integer.toString(server.port()))) {
                List<String> active = new ArrayList<>();
                endpoint.path("ActiveModels").fieldNames().forEachRemaining(active::add);
                return active;
            }
        }
        return List.of();
    }

    private static String summary(JsonNode candidates) {
        List<String> parts = new ArrayList<>();
        for (JsonNode candidate : candidates.path("endpoints-weighted-score")) {
            JsonNode e = candidate.path("Endpoint");
            parts.add(e.path("Port").asText() + " score "
                    + candidate.path("Score").asText() + " active "
                    + e.path("ActiveModels") + " waiting " + e.path("WaitingModels") + " max "
                    + e.path("MaxActiveModels") + " queue " + e.path("WaitingQueueSize") + " running "
                    + e.path("RunningRequestsSize") + " kv " + e.path("KVCacheUsagePercent"));
        }
        return String.join("; ", parts);
    }

    // --- plumbing
    // -----------------------------------------------------------------------------------------------------

    /** Starts a front; a program that is not installed skips the test locally and fails it under CI. */
    private static FieldFront.Running start(FieldFront kind) throws Exception {
        for (String tool : kind.tools()) {
            tool(tool);
        }
        return kind.start(servers, dir);
    }

    private static Path tool(String name) {
        try {
            return FieldTools.require(name);
        } catch (FieldTools.MissingTool e) {
            throw RequiredTool.missing(e.getMessage());
        }
    }

    interface Reading {
        Object read() throws Exception;
    }

    static Object safe(Reading reading) {
        try {
            return reading.read();
        } catch (Exception e) {
            return e.toString();
        }
    }
}
