package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.sim.SimTokenizer;
import dev.patchbay.model.ModelGenerator;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** vLLM's {@code POST /tokenize} and {@code POST /detokenize}, on the simulated model and on a generated real one. */
class TokenizeTest {
    private static List<Integer> ints(JsonNode array) {
        return StreamSupport.stream(array.spliterator(), false)
                .map(JsonNode::asInt)
                .toList();
    }

    private static List<String> strings(JsonNode array) {
        return StreamSupport.stream(array.spliterator(), false)
                .map(JsonNode::asText)
                .toList();
    }

    private static String json(Object value) throws Exception {
        return ServerHarness.JSON.writeValueAsString(value);
    }

    private static JsonNode ok(HttpResponse<String> r) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return ServerHarness.json(r);
    }

    private static void assertError(HttpResponse<String> r, int status, String type, String param, String message)
            throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        JsonNode e = ServerHarness.json(r).get("error");
        assertThat(e.get("type").asText()).isEqualTo(type);
        assertThat(e.get("code").asInt()).isEqualTo(status);
        assertThat(e.get("message").asText()).contains(message);
        if (param == null) assertThat(e.get("param").isNull()).isTrue();
        else assertThat(e.get("param").asText()).isEqualTo(param);
    }

    @Nested
    class SimulatedModel {
        @TempDir
        Path dir;

        private ServerHarness start() throws Exception {
            return new ServerHarness(dir, List.of("alpha"), "--enable-lora", "--api-key", "secret");
        }

        @Test
        void aPromptRoundTripsThroughTokenizeAndDetokenize() throws Exception {
            try (ServerHarness h = start()) {
                String prompt = "the model of the cache, café ☕";
                JsonNode t = ok(h.post("/tokenize", "{\"model\": \"test-model\", \"prompt\": " + json(prompt) + "}"));
                List<Integer> tokens = ints(t.get("tokens"));
                assertThat(tokens).isEqualTo(toList(new SimTokenizer().encode(prompt)));
                assertThat(t.get("count").asInt()).isEqualTo(tokens.size());
                assertThat(t.get("max_model_len").asInt()).isEqualTo(8192);
                assertThat(t.has("token_strs")).isTrue();
                assertThat(t.get("token_strs").isNull()).isTrue();

                JsonNode d = ok(h.post("/detokenize", "{\"model\": \"test-model\", \"tokens\": " + json(tokens) + "}"));
                assertThat(d.get("prompt").asText()).isEqualTo(prompt);
            }
        }

        @Test
        void tokenStringsSpellEachToken() throws Exception {
            try (ServerHarness h = start()) {
                JsonNode t = ok(h.post("/tokenize", "{\"prompt\": \"the cache é\", \"return_token_strs\": true}"));
                // Words with their space, ASCII bytes as themselves, the two UTF-8 bytes of é as byte tokens.
                assertThat(strings(t.get("token_strs")))
                        .containsExactly("t", "h", "e", " cache", " ", "<0xC3>", "<0xA9>");
                assertThat(t.get("token_strs").size()).isEqualTo(t.get("count").asInt());
            }
        }

        @Test
        void chatMessagesGoThroughTheChatFormat() throws Exception {
            try (ServerHarness h = start()) {
                String messages = "[{\"role\": \"user\", \"content\": \"hi there\"}]";
                JsonNode withPrompt = ok(h.post("/tokenize", "{\"messages\": " + messages + "}"));
                assertThat(ok(h.post("/detokenize", "{\"tokens\": " + withPrompt.get("tokens") + "}"))
                                .get("prompt")
                                .asText())
                        .isEqualTo("user: hi there\nassistant:");
                JsonNode without =
                        ok(h.post("/tokenize", "{\"messages\": " + messages + ", \"add_generation_prompt\": false}"));
                assertThat(ok(h.post("/detokenize", "{\"tokens\": " + without.get("tokens") + "}"))
                                .get("prompt")
                                .asText())
                        .isEqualTo("user: hi there\n");
            }
        }

        @Test
        void specialTokensAreWrittenOutByDetokenize() throws Exception {
            try (ServerHarness h = start()) {
                List<Integer> tokens = new ArrayList<>(toList(new SimTokenizer().encode(" the end")));
                tokens.add(SimTokenizer.EOS);
                assertThat(ok(h.post("/detokenize", "{\"tokens\": " + json(tokens) + "}"))
                                .get("prompt")
                                .asText())
                        .isEqualTo(" the end</s>");
            }
        }

        @Test
        void anAdapterNameTokenizesWithTheBaseModelsTokenizerAndAnUnknownNameIs404() throws Exception {
            try (ServerHarness h = start()) {
                JsonNode base = ok(h.post("/tokenize", "{\"model\": \"test-model\", \"prompt\": \"the end\"}"));
                JsonNode adapter = ok(h.post("/tokenize", "{\"model\": \"alpha\", \"prompt\": \"the end\"}"));
                assertThat(adapter.get("tokens")).isEqualTo(base.get("tokens"));
                assertError(
                        h.post("/tokenize", "{\"model\": \"nope\", \"prompt\": \"x\"}"),
                        404,
                        "NotFoundError",
                        "model",
                        "The model `nope` does not exist.");
                assertError(
                        h.post("/detokenize", "{\"model\": \"nope\", \"tokens\": [1]}"),
                        404,
                        "NotFoundError",
                        "model",
                        "The model `nope` does not exist.");
            }
        }

        @Test
        void badFieldsAre400sNamingTheField() throws Exception {
            try (ServerHarness h = start()) {
                int vocab = new SimTokenizer().vocabSize();
                assertError(
                        h.post("/detokenize", "{\"tokens\": [1, " + vocab + "]}"),
                        400,
                        "BadRequestError",
                        "tokens",
                        "token id " + vocab + " is out of vocabulary range [0, " + vocab + ")");
                assertError(
                        h.post("/detokenize", "{\"tokens\": [-1]}"),
                        400,
                        "BadRequestError",
                        "tokens",
                        "token id -1 is out of vocabulary range");
                assertError(
                        h.post("/detokenize", "{\"tokens\": [\"a\"]}"),
                        400,
                        "BadRequestError",
                        "tokens",
                        "tokens must be an integer, got a string");
                assertError(
                        h.post("/detokenize", "{\"tokens\": [1.5]}"),
                        400,
                        "BadRequestError",
                        "tokens",
                        "must be an integer");
                assertError(
                        h.post("/detokenize", "{\"tokens\": \"abc\"}"),
                        400,
                        "BadRequestError",
                        "tokens",
                        "tokens must be a list, got a string");
                assertError(h.post("/detokenize", "{}"), 400, "BadRequestError", "tokens", "tokens is required");
                assertError(
                        h.post("/tokenize", "{\"prompt\": 5}"),
                        400,
                        "BadRequestError",
                        "prompt",
                        "prompt must be a string, got an integer");
                assertError(
                        h.post("/tokenize", "{\"prompt\": \"x\", \"model\": 3}"),
                        400,
                        "BadRequestError",
                        "model",
                        "model must be a string");
                assertError(
                        h.post("/tokenize", "{\"prompt\": \"x\", \"add_special_tokens\": \"yes\"}"),
                        400,
                        "BadRequestError",
                        "add_special_tokens",
                        "add_special_tokens must be a boolean, got a string");
                assertError(
                        h.post("/tokenize", "{\"prompt\": \"x\", \"return_token_strs\": 1}"),
                        400,
                        "BadRequestError",
                        "return_token_strs",
                        "must be a boolean");
                assertError(
                        h.post("/tokenize", "{\"messages\": \"hi\"}"),
                        400,
                        "BadRequestError",
                        "messages",
                        "messages must be a list");
                assertError(
                        h.post("/tokenize", "{\"messages\": [{\"content\": \"hi\"}]}"),
                        400,
                        "BadRequestError",
                        "messages",
                        "needs a role");
                assertError(
                        h.post(
                                "/tokenize",
                                "{\"prompt\": \"x\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}"),
                        400,
                        "BadRequestError",
                        null,
                        "not both");
                assertError(
                        h.post("/tokenize", "{\"model\": \"test-model\"}"),
                        400,
                        "BadRequestError",
                        null,
                        "not neither");
                assertError(h.post("/tokenize", "{\"prompt\": "), 400, "BadRequestError", null, "not valid JSON");
            }
        }

        @Test
        void theApiKeyGuardsOnlyV1PathsAsInVllm() throws Exception {
            try (ServerHarness h = start()) {
                assertThat(h.post("/tokenize", "{\"prompt\": \"the end\"}").statusCode())
                        .isEqualTo(200);
                assertThat(h.post("/detokenize", "{\"tokens\": [300]}").statusCode())
                        .isEqualTo(200);
                assertThat(h.post("/v1/completions", "{\"prompt\": \"the end\", \"max_tokens\": 1}")
                                .statusCode())
                        .isEqualTo(401);
            }
        }
    }

    @Nested
    class RealModel {
        @TempDir
        Path dir;

        /** The generated model, told to put a BOS before prompts, so add_special_tokens has something to add. */
        private PatchbayServer start() throws Exception {
            Path model = dir.resolve("tiny");
            ModelGenerator.writeModel(model, ModelGenerator.Spec.tiny());
            ObjectMapper om = new ObjectMapper();
            Path tc = model.resolve("tokenizer_config.json");
            ObjectNode c = (ObjectNode) om.readTree(tc.toFile());
            c.put("add_bos_token", true);
            om.writeValue(tc.toFile(), c);
            return PatchbayServer.start(ServeCommand.parse(
                    "--model",
                    model.toString(),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--kv-cache-memory-bytes",
                    "1M",
                    "--max-model-len",
                    "512"));
        }

        private ServerHarnessClient client(PatchbayServer s) {
            return new ServerHarnessClient(s.port());
        }

        @Test
        void promptsGetTheBosUnlessToldNotToAndRoundTrip() throws Exception {
            PatchbayServer s = start();
            try {
                ServerHarnessClient h = client(s);
                String prompt = "Hello world! The naïve café serves ☕.";
                JsonNode t = ok(h.post(
                        "/tokenize",
                        "{\"model\": \"tiny\", \"prompt\": " + json(prompt) + ", \"return_token_strs\": true}"));
                List<Integer> tokens = ints(t.get("tokens"));
                List<String> strs = strings(t.get("token_strs"));
                assertThat(strs.getFirst()).isEqualTo(ModelGenerator.BOS);
                assertThat(tokens.getFirst())
                        .isEqualTo(s.engine().model().tokenizer().encode(ModelGenerator.BOS, false)[0]);
                assertThat(t.get("max_model_len").asInt()).isEqualTo(512);
                // Byte-level pieces: a space is spelled 'Ġ', the bytes of 'ï' as two characters.
                assertThat(strs).contains("ĠThe", "Ã", "¯").hasSize(tokens.size());

                JsonNode plain =
                        ok(h.post("/tokenize", "{\"prompt\": " + json(prompt) + ", \"add_special_tokens\": false}"));
                assertThat(ints(plain.get("tokens"))).isEqualTo(tokens.subList(1, tokens.size()));
                assertThat(plain.get("count").asInt()).isEqualTo(tokens.size() - 1);

                // The characters split across byte-level tokens come back whole; the BOS is written out.
                assertThat(ok(h.post("/detokenize", "{\"tokens\": " + plain.get("tokens") + "}"))
                                .get("prompt")
                                .asText())
                        .isEqualTo(prompt);
                assertThat(ok(h.post("/detokenize", "{\"tokens\": " + t.get("tokens") + "}"))
                                .get("prompt")
                                .asText())
                        .isEqualTo(ModelGenerator.BOS + prompt);

                // The same prompt through the completions API counts the same tokens.
                JsonNode c = ok(h.post("/v1/completions", "{\"prompt\": " + json(prompt) + ", \"max_tokens\": 1}"));
                assertThat(c.get("usage").get("prompt_tokens").asInt()).isEqualTo(tokens.size());
            } finally {
                s.stop();
            }
        }

        @Test
        void chatMessagesAreRenderedByTheTemplateWithItsOwnBosOnly() throws Exception {
            PatchbayServer s = start();
            try {
                ServerHarnessClient h = client(s);
                String messages =
                        "[{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": \"Hello\"}]";
                String rendered = ModelGenerator.BOS
                        + "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n";
                JsonNode t = ok(h.post("/tokenize", "{\"messages\": " + messages + "}"));
                assertThat(ok(h.post("/detokenize", "{\"tokens\": " + t.get("tokens") + "}"))
                                .get("prompt")
                                .asText())
                        .isEqualTo(rendered + "<|im_start|>assistant\n");
                JsonNode noPrompt =
                        ok(h.post("/tokenize", "{\"messages\": " + messages + ", \"add_generation_prompt\": false}"));
                assertThat(ok(h.post("/detokenize", "{\"tokens\": " + noPrompt.get("tokens") + "}"))
                                .get("prompt")
                                .asText())
                        .isEqualTo(rendered);
                // The template's BOS is its own: asking for special tokens on top must not drop it.
                JsonNode special =
                        ok(h.post("/tokenize", "{\"messages\": " + messages + ", \"add_special_tokens\": true}"));
                assertThat(ok(h.post("/detokenize", "{\"tokens\": " + special.get("tokens") + "}"))
                                .get("prompt")
                                .asText())
                        .startsWith(ModelGenerator.BOS)
                        .endsWith(rendered.substring(ModelGenerator.BOS.length()) + "<|im_start|>assistant\n");

                JsonNode c = ok(h.post("/v1/chat/completions", "{\"messages\": " + messages + ", \"max_tokens\": 1}"));
                assertThat(c.get("usage").get("prompt_tokens").asInt())
                        .isEqualTo(t.get("count").asInt());
            } finally {
                s.stop();
            }
        }

        @Test
        void tokenIdsOutsideTheTokenizerAre400s() throws Exception {
            PatchbayServer s = start();
            try {
                ServerHarnessClient h = client(s);
                int vocab = s.engine().model().tokenizer().vocabSize();
                assertError(
                        h.post("/detokenize", "{\"tokens\": [" + vocab + "]}"),
                        400,
                        "BadRequestError",
                        "tokens",
                        "token id " + vocab + " is out of vocabulary range [0, " + vocab + ")");
                assertThat(ok(h.post("/detokenize", "{\"tokens\": []}"))
                                .get("prompt")
                                .asText())
                        .isEmpty();
                assertError(
                        h.post("/tokenize", "{\"model\": \"other\", \"prompt\": \"x\"}"),
                        404,
                        "NotFoundError",
                        "model",
                        "The model `other` does not exist.");
            } finally {
                s.stop();
            }
        }
    }

    /** Posts JSON to a server started here without {@link ServerHarness}. */
    private record ServerHarnessClient(int port) {
        HttpResponse<String> post(String path, String body) throws Exception {
            return HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(body))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
        }
    }

    private static List<Integer> toList(int[] ids) {
        return Arrays.stream(ids).boxed().toList();
    }
}
