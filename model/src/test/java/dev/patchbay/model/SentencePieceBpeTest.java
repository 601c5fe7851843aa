package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SentencePiece-style BPE as Llama 2 and Mistral ship it in tokenizer.json: '▁' for spaces, byte fallback. */
class SentencePieceBpeTest {
    @TempDir
    Path dir;

    BpeTokenizer tok;

    @BeforeEach
    void write() throws Exception {
        ObjectMapper om = new ObjectMapper();
        ObjectNode root = om.createObjectNode();
        ArrayNode added = root.putArray("added_tokens");
        String[] specials = {"<unk>", "<s>", "</s>"};
        for (int i = 0; i < specials.length; i++)
            added.addObject().put("id", i).put("content", specials[i]).put("special", true);
        ObjectNode normalizer = root.putObject("normalizer").put("type", "Sequence");
        ArrayNode norms = normalizer.putArray("normalizers");
        norms.addObject().put("type", "Prepend").put("prepend", "\u2581");
        norms.addObject()
                .put("type", "Replace")
                .put("content", "\u2581")
                .putObject("pattern")
                .put("String", " ");
        root.putNull("pre_tokenizer");
        ObjectNode model = root.putObject("model").put("type", "BPE").put("byte_fallback", true);
        ObjectNode vocab = model.putObject("vocab");
        for (int i = 0; i < specials.length; i++) vocab.put(specials[i], i);
        for (int b = 0; b < 256; b++) vocab.put(String.format("<0x%02X>", b), 3 + b);
        List<String> pieces = List.of(
                "\u2581",
                "h",
                "e",
                "l",
                "o",
                "w",
                "r",
                "d",
                "\u2581h",
                "\u2581he",
                "ll",
                "\u2581hell",
                "\u2581hello",
                "\u2581w",
                "or",
                "\u2581wor",
                "\u2581worl",
                "\u2581world");
        for (int i = 0; i < pieces.size(); i++) vocab.put(pieces.get(i), 259 + i);
        ArrayNode merges = model.putArray("merges");
        for (String m : List.of(
                "\u2581 h",
                "\u2581h e",
                "l l",
                "\u2581he ll",
                "\u2581hell o",
                "\u2581 w",
                "o r",
                "\u2581w or",
                "\u2581wor l",
                "\u2581worl d")) merges.add(m);
        Path file = dir.resolve("tokenizer.json");
        om.writeValue(file.toFile(), root);
        tok = BpeTokenizer.read(file, "<s>", "</s>", true);
    }

    @Test
    void wordsMergeWithTheirLeadingSpaceMarker() {
        assertThat(tok.encode("hello world", false)).containsExactly(259 + 12, 259 + 17);
        assertThat(tok.encode("hello world")).containsExactly(1, 259 + 12, 259 + 17);
    }

    @Test
    void unknownCharactersFallBackToByteTokens() {
        // "é" is not in the vocabulary: its UTF-8 bytes C3 A9 become <0xC3> <0xA9>.
        assertThat(tok.encode("hé", false)).containsExactly(259 + 8, 3 + 0xC3, 3 + 0xA9);
    }

    @Test
    void decodingTurnsMarkersBackIntoSpacesAndBytesBackIntoText() {
        assertThat(tok.decode(tok.encode("hello world", false))).isEqualTo(" hello world");
        assertThat(tok.decode(tok.encode("hé hello", false))).isEqualTo(" hé hello");
        assertThat(tok.tokenBytes(1)).isEmpty(); // special
    }
}
