package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.model.ModelGenerator;
import dev.patchbay.server.PatchbayServer;
import dev.patchbay.server.ServeCommand;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A generated Llama model served over HTTP by the real CPU executor, with two adapters. */
class RealModelServeTest {
    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newHttpClient();

    private JsonNode complete(int port, String model) throws Exception {
        return complete(port, model, "hello world");
    }

    private JsonNode complete(int port, String model, String prompt) throws Exception {
        String body = "{\"model\":\"" + model + "\",\"prompt\":\"" + prompt
                + "\",\"max_tokens\":8,\"temperature\":0,\"ignore_eos\":true}";
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return new ObjectMapper().readTree(r.body());
    }

    @Test
    void greedyCompletionsAreDeterministicAndDifferPerAdapter() throws Exception {
        ModelGenerator.Spec spec = ModelGenerator.Spec.tiny();
        Path model = dir.resolve("tiny");
        ModelGenerator.writeModel(model, spec);
        ModelGenerator.writeAdapter(dir.resolve("a"), spec, 8, 16, List.of("q_proj", "v_proj", "down_proj"), 1);
        ModelGenerator.writeAdapter(dir.resolve("b"), spec, 8, 16, List.of("q_proj", "v_proj", "down_proj"), 2);
        PatchbayServer server = PatchbayServer.start(ServeCommand.parse(
                "--model",
                model.toString(),
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--enable-lora",
                "--max-loras",
                "2",
                "--lora-modules",
                "a=" + dir.resolve("a"),
                "b=" + dir.resolve("b"),
                "--num-gpu-blocks-override",
                "256"));
        try {
            int port = server.port();
            String base1 =
                    complete(port, "tiny").get("choices").get(0).get("text").asText();
            String a1 = complete(port, "a").get("choices").get(0).get("text").asText();
            String b1 = complete(port, "b").get("choices").get(0).get("text").asText();
            assertThat(complete(port, "a").get("choices").get(0).get("text").asText())
                    .isEqualTo(a1);
            assertThat(complete(port, "tiny").get("choices").get(0).get("text").asText())
                    .isEqualTo(base1);
            assertThat(complete(port, "b").get("choices").get(0).get("text").asText())
                    .isEqualTo(b1);
            // Token ids differ even where random bytes decode to similar text.
            assertThat(List.of(base1, a1, b1)).doesNotHaveDuplicates();
            assertThat(complete(port, "a").get("usage").get("completion_tokens").asInt())
                    .isEqualTo(8);
        } finally {
            server.stop();
        }
    }

    @Test
    void prefixCachingReusesKvWithoutChangingTheOutput() throws Exception {
        ModelGenerator.Spec spec = ModelGenerator.Spec.tiny();
        Path model = dir.resolve("tiny");
        ModelGenerator.writeModel(model, spec);
        ModelGenerator.writeAdapter(dir.resolve("a"), spec, 8, 16, List.of("q_proj", "k_proj", "v_proj"), 3);
        String prompt = "the quick brown fox jumps over the lazy dog and the quick brown fox again";
        String[] plain = new String[2];
        String[] cached = new String[2];
        for (boolean caching : new boolean[] {false, true}) {
            List<String> args = new ArrayList<>(List.of(
                    "--model",
                    model.toString(),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--enable-lora",
                    "--lora-modules",
                    "a=" + dir.resolve("a"),
                    "--block-size",
                    "4",
                    "--num-gpu-blocks-override",
                    "256"));
            if (caching) args.add("--enable-prefix-caching");
            PatchbayServer server = PatchbayServer.start(ServeCommand.parse(args.toArray(String[]::new)));
            try {
                String[] out = caching ? cached : plain;
                out[0] = complete(server.port(), "tiny", prompt)
                        .get("choices")
                        .get(0)
                        .get("text")
                        .asText();
                out[1] = complete(server.port(), "a", prompt)
                        .get("choices")
                        .get(0)
                        .get("text")
                        .asText();
                // Asked again: with caching, most of the prompt's KV now comes from the cache.
                assertThat(complete(server.port(), "tiny", prompt)
                                .get("choices")
                                .get(0)
                                .get("text")
                                .asText())
                        .isEqualTo(out[0]);
                assertThat(complete(server.port(), "a", prompt)
                                .get("choices")
                                .get(0)
                                .get("text")
                                .asText())
                        .isEqualTo(out[1]);
                long hits = server.engine().snapshot().counters().prefixCache().hits();
                if (caching) assertThat(hits).isPositive();
                else assertThat(hits).isZero();
            } finally {
                server.stop();
            }
        }
        assertThat(cached).containsExactly(plain);
    }
}
