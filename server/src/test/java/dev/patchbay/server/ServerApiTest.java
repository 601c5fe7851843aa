package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.sim.SimTokenizer;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.testkit.Await;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerApiTest {
    @TempDir
    static Path dir;

    ServerHarness h;

    @BeforeAll
    void start() throws Exception {
        h = new ServerHarness(
                dir,
                List.of("alpha", "beta"),
                "--enable-lora",
                "--max-loras",
                "2",
                "--max-cpu-loras",
                "3",
                "--allow-runtime-lora-updating",
                "--max-request-body-bytes",
                "4096",
                "--sim-latency-ms",
                "1,0,0.1,0,5,1");
    }

    @AfterAll
    void stop() {
        h.close();
    }

    private static void assertError(HttpResponse<String> r, int status, String messagePart) throws Exception {
        assertThat(r.statusCode()).isEqualTo(status);
        JsonNode e = ServerHarness.json(r).get("error");
        assertThat(e).isNotNull();
        assertThat(e.get("message").asText()).contains(messagePart);
        assertThat(e.get("code").asInt()).isEqualTo(status);
        assertThat(e.has("type")).isTrue();
        assertThat(e.has("param")).isTrue();
    }

    @Test
    void modelsListsBaseAndAdapters() throws Exception {
        JsonNode m = ServerHarness.json(h.get("/v1/models"));
        assertThat(m.get("object").asText()).isEqualTo("list");
        JsonNode base = m.get("data").get(0);
        assertThat(base.get("id").asText()).isEqualTo("test-model");
        assertThat(base.get("max_model_len").asInt()).isEqualTo(8192);
        assertThat(base.get("parent").isNull()).isTrue();
        JsonNode alpha = m.get("data").get(1);
        assertThat(alpha.get("id").asText()).isEqualTo("alpha");
        assertThat(alpha.get("parent").asText()).isEqualTo("test-model");
        assertThat(alpha.get("root").asText()).isEqualTo(dir.resolve("alpha").toString());
        assertThat(alpha.get("max_model_len").isNull()).isTrue();
    }

    @Test
    void completionWithAdapter() throws Exception {
        var r = h.post(
                "/v1/completions",
                "{\"model\":\"alpha\",\"prompt\":\"the water\",\"max_tokens\":7,\"ignore_eos\":true}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode j = ServerHarness.json(r);
        assertThat(j.get("id").asText()).startsWith("cmpl-");
        assertThat(j.get("object").asText()).isEqualTo("text_completion");
        assertThat(j.get("model").asText()).isEqualTo("alpha");
        assertThat(j.get("choices").get(0).get("finish_reason").asText()).isEqualTo("length");
        assertThat(j.get("choices").get(0).get("text").asText()).isNotBlank();
        int promptTokens = new SimTokenizer().encode("the water").length;
        assertThat(j.get("usage").get("prompt_tokens").asInt()).isEqualTo(promptTokens);
        assertThat(j.get("usage").get("completion_tokens").asInt()).isEqualTo(7);
        assertThat(j.get("usage").get("total_tokens").asInt()).isEqualTo(promptTokens + 7);
    }

    @Test
    void seededCompletionsAreReproducibleAndNGivesChoices() throws Exception {
        String body =
                "{\"model\":\"test-model\",\"prompt\":\"hello\",\"max_tokens\":5,\"seed\":3,\"n\":2,\"ignore_eos\":true}";
        JsonNode a = ServerHarness.json(h.post("/v1/completions", body));
        JsonNode b = ServerHarness.json(h.post("/v1/completions", body));
        assertThat(a.get("choices")).hasSize(2);
        assertThat(a.get("choices").get(1).get("index").asInt()).isEqualTo(1);
        assertThat(a.get("choices")).isEqualTo(b.get("choices"));
        assertThat(a.get("usage").get("completion_tokens").asInt()).isEqualTo(10);
    }

    @Test
    void chatCompletion() throws Exception {
        var r = h.post(
                "/v1/chat/completions",
                "{\"model\":\"beta\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                        + "\"max_tokens\":3,\"ignore_eos\":true}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode j = ServerHarness.json(r);
        assertThat(j.get("object").asText()).isEqualTo("chat.completion");
        assertThat(j.get("choices").get(0).get("message").get("role").asText()).isEqualTo("assistant");
        assertThat(j.get("usage").get("completion_tokens").asInt()).isEqualTo(3);
    }

    @Test
    void chatStreamingWithUsage() throws Exception {
        var r = h.post(
                "/v1/chat/completions",
                "{\"model\":\"alpha\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                        + "\"max_tokens\":4,\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
        List<String> events = new ArrayList<>();
        for (String block : r.body().split("\n\n")) if (!block.isBlank()) events.add(block);
        assertThat(events).allSatisfy(e -> assertThat(e).startsWith("data: "));
        assertThat(events.get(events.size() - 1)).isEqualTo("data: [DONE]");
        JsonNode first = ServerHarness.JSON.readTree(events.get(0).substring(6));
        assertThat(first.get("choices").get(0).get("delta").get("role").asText())
                .isEqualTo("assistant");
        JsonNode usage =
                ServerHarness.JSON.readTree(events.get(events.size() - 2).substring(6));
        assertThat(usage.get("choices")).isEmpty();
        assertThat(usage.get("usage").get("completion_tokens").asInt()).isEqualTo(4);
        JsonNode last =
                ServerHarness.JSON.readTree(events.get(events.size() - 3).substring(6));
        assertThat(last.get("choices").get(0).get("finish_reason").asText()).isEqualTo("length");
        StringBuilder text = new StringBuilder();
        for (String e : events.subList(1, events.size() - 2)) {
            text.append(ServerHarness.JSON
                    .readTree(e.substring(6))
                    .get("choices")
                    .get(0)
                    .get("delta")
                    .get("content")
                    .asText());
        }
        assertThat(text.toString()).isNotBlank();
    }

    @Test
    void completionStreaming() throws Exception {
        var r = h.post(
                "/v1/completions",
                "{\"model\":\"test-model\",\"prompt\":\"hi\",\"max_tokens\":3,\"ignore_eos\":true,\"stream\":true}");
        String[] events = r.body().split("\n\n");
        assertThat(events).hasSize(4); // three tokens, then [DONE]
        assertThat(events[3]).isEqualTo("data: [DONE]");
        assertThat(ServerHarness.JSON
                        .readTree(events[0].substring(6))
                        .get("object")
                        .asText())
                .isEqualTo("text_completion");
    }

    @Test
    void badRequests() throws Exception {
        assertError(h.post("/v1/completions", "{not json"), 400, "not valid JSON");
        assertError(h.post("/v1/completions", "[1,2]"), 400, "must be a JSON object");
        assertError(h.post("/v1/completions", "{\"model\":\"alpha\"}"), 400, "prompt is required");
        assertError(
                h.post("/v1/completions", "{\"model\":\"alpha\",\"prompt\":\"x\",\"max_tokens\":9000}"),
                400,
                "maximum context length is 8192 tokens");
        assertError(
                h.post("/v1/completions", "{\"model\":\"alpha\",\"prompt\":\"x\",\"temperature\":-1}"),
                400,
                "temperature");
        assertError(h.post("/v1/chat/completions", "{\"model\":\"alpha\",\"messages\":[]}"), 400, "messages");
        assertError(h.post("/v1/completions", "{\"model\":\"alpha\",\"prompt\":[999999]}"), 400, "out of vocabulary");
    }

    @Test
    void unknownModelIs404() throws Exception {
        assertError(
                h.post("/v1/completions", "{\"model\":\"nope\",\"prompt\":\"x\"}"),
                404,
                "The model `nope` does not exist.");
        assertThat(h.get("/v1/nothing").statusCode()).isEqualTo(404);
    }

    @Test
    void bodyTooLargeIs413() throws Exception {
        String big = "{\"model\":\"alpha\",\"prompt\":\"" + "x".repeat(5000) + "\"}";
        assertError(h.post("/v1/completions", big), 413, "larger than the limit of 4096 bytes");
        // The server keeps serving.
        assertThat(h.post("/v1/completions", "{\"model\":\"alpha\",\"prompt\":\"x\",\"max_tokens\":1}")
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void loadAndUnloadAdapters() throws Exception {
        ServerHarness.writeAdapter(dir, "gamma");
        var ok = h.post(
                "/v1/load_lora_adapter", "{\"lora_name\":\"gamma\",\"lora_path\":\"" + dir.resolve("gamma") + "\"}");
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.body()).isEqualTo("Success: LoRA adapter 'gamma' added successfully.");
        assertThat(h.post("/v1/completions", "{\"model\":\"gamma\",\"prompt\":\"x\",\"max_tokens\":2}")
                        .statusCode())
                .isEqualTo(200);

        assertError(
                h.post(
                        "/v1/load_lora_adapter",
                        "{\"lora_name\":\"gamma\",\"lora_path\":\"" + dir.resolve("gamma") + "\"}"),
                400,
                "has already been loaded");
        assertError(
                h.post("/v1/load_lora_adapter", "{\"lora_name\":\"x\"}"),
                400,
                "Both 'lora_name' and 'lora_path' must be provided.");
        assertError(
                h.post(
                        "/v1/load_lora_adapter",
                        "{\"lora_name\":\"x\",\"lora_path\":\"" + dir.resolve("missing") + "\"}"),
                404,
                "No adapter found");
        Path dora = ServerHarness.writeAdapter(dir, "dora");
        String cfg = Files.readString(dora.resolve("adapter_config.json"))
                .replace("\"use_dora\" : false", "\"use_dora\" : true");
        Files.writeString(dora.resolve("adapter_config.json"), cfg);
        assertError(
                h.post("/v1/load_lora_adapter", "{\"lora_name\":\"dora\",\"lora_path\":\"" + dora + "\"}"),
                400,
                "DoRA");
        Path outside = Files.createTempDirectory("patchbay-outside");
        ServerHarness.writeAdapter(outside, "evil");
        assertError(
                h.post(
                        "/v1/load_lora_adapter",
                        "{\"lora_name\":\"evil\",\"lora_path\":\"" + outside.resolve("evil") + "\"}"),
                400,
                "outside the directories allowed");
        Path link = dir.resolve("link-to-evil");
        Files.createSymbolicLink(link, outside.resolve("evil"));
        assertError(
                h.post("/v1/load_lora_adapter", "{\"lora_name\":\"evil\",\"lora_path\":\"" + link + "\"}"),
                400,
                "outside the directories allowed");
        assertError(
                h.post(
                        "/v1/load_lora_adapter",
                        "{\"lora_name\":\"evil\",\"lora_path\":\"" + dir + "/../" + outside.getFileName() + "/evil\"}"),
                400,
                "outside the directories allowed");

        var unloaded = h.post("/v1/unload_lora_adapter", "{\"lora_name\":\"gamma\"}");
        assertThat(unloaded.statusCode()).isEqualTo(200);
        assertThat(unloaded.body()).isEqualTo("Success: LoRA adapter 'gamma' removed successfully.");
        assertError(h.post("/v1/completions", "{\"model\":\"gamma\",\"prompt\":\"x\"}"), 404, "does not exist");
        assertError(h.post("/v1/unload_lora_adapter", "{\"lora_name\":\"gamma\"}"), 404, "cannot be found");
    }

    @Test
    void loadInPlaceBringsARegisteredAdapterIntoHostMemory() throws Exception {
        Path delta = ServerHarness.writeAdapter(dir, "delta");
        h.server.engine().core().loadAdapter("delta", delta, false, false).join();
        assertThat(h.server.engine().core().adapter("delta").level()).isEqualTo(AdapterState.Level.NONE);

        var preloaded = h.post(
                "/v1/load_lora_adapter",
                "{\"lora_name\":\"delta\",\"lora_path\":\"" + delta + "\",\"load_inplace\":true}");
        assertThat(preloaded.statusCode()).isEqualTo(200);
        // The answer comes once the adapter is resident.
        assertThat(h.server.engine().core().adapter("delta").level()).isNotEqualTo(AdapterState.Level.NONE);

        Path other = ServerHarness.writeAdapter(dir, "delta-elsewhere");
        assertError(
                h.post(
                        "/v1/load_lora_adapter",
                        "{\"lora_name\":\"delta\",\"lora_path\":\"" + other + "\",\"load_inplace\":true}"),
                400,
                "cannot change its path");
        assertThat(h.post("/v1/unload_lora_adapter", "{\"lora_name\":\"delta\"}")
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void healthVersionAndFilteredMetrics() throws Exception {
        assertThat(h.get("/health").statusCode()).isEqualTo(200);
        assertThat(ServerHarness.json(h.get("/version")).get("version").asText())
                .isEqualTo("0.1.0");
        String page = h.get("/metrics?name%5B%5D=vllm:num_requests_running&name%5B%5D=vllm:lora_requests_info")
                .body();
        List<String> families = page.lines()
                .filter(l -> l.startsWith("# TYPE"))
                .map(l -> l.split(" ")[2])
                .toList();
        assertThat(families).containsExactlyInAnyOrder("vllm:num_requests_running", "vllm:lora_requests_info");
    }

    @Test
    void clientDisconnectMidStreamAbortsTheRequest() throws Exception {
        long abortsBefore = h.server.engine().snapshot().counters().finished().abort();
        HttpRequest req = HttpRequest.newBuilder(URI.create(h.base + "/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(
                        HttpRequest.BodyPublishers.ofString(
                                "{\"model\":\"alpha\",\"prompt\":\"x\",\"max_tokens\":5000,\"ignore_eos\":true,\"stream\":true}"))
                .build();
        HttpResponse<InputStream> r = h.http.send(req, HttpResponse.BodyHandlers.ofInputStream());
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            assertThat(in.readLine()).startsWith("data: ");
        }
        Await.until(
                "the dropped stream counted as an abort",
                () -> h.server.engine().snapshot().counters().finished().abort() != abortsBefore);
        assertThat(h.server.engine().snapshot().counters().finished().abort()).isEqualTo(abortsBefore + 1);
    }
}
