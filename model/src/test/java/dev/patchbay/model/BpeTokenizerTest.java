package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BpeTokenizerTest {
    @TempDir
    Path dir;

    /** 256 byte tokens, then the merged tokens, then one special token. */
    private BpeTokenizer handMade(boolean mergesAsArrays, String... merges) throws Exception {
        ObjectMapper om = new ObjectMapper();
        ObjectNode root = om.createObjectNode();
        ObjectNode model = root.putObject("model");
        model.put("type", "BPE");
        ObjectNode vocab = model.putObject("vocab");
        for (int b = 0; b < 256; b++) vocab.put(BpeTokenizer.bytesToUnicode(new byte[] {(byte) b}), b);
        ArrayNode ms = model.putArray("merges");
        int id = 256;
        for (String m : merges) {
            String[] ab = m.split(" ");
            vocab.put(ab[0] + ab[1], id++);
            if (mergesAsArrays) ms.addArray().add(ab[0]).add(ab[1]);
            else ms.add(m);
        }
        root.putArray("added_tokens")
                .addObject()
                .put("id", id)
                .put("content", "<|im_start|>")
                .put("special", true);
        ObjectNode pre = root.putObject("pre_tokenizer");
        pre.put("type", "Sequence");
        ArrayNode steps = pre.putArray("pretokenizers");
        steps.addObject()
                .put("type", "Split")
                .put("behavior", "Isolated")
                .putObject("pattern")
                .put("Regex", BpeTokenizer.LLAMA3_PATTERN);
        steps.addObject().put("type", "ByteLevel").put("use_regex", false);
        Path file = dir.resolve("tokenizer.json");
        om.writeValue(file.toFile(), root);
        return BpeTokenizer.read(file, null, null, null);
    }

    @Test
    void mergesApplyLowestRankFirst() throws Exception {
        for (boolean arrays : new boolean[] {false, true}) {
            BpeTokenizer t = handMade(arrays, "b c", "a b", "ab c"); // bc=256, ab=257, abc=258
            assertThat(t.encode("abc")).containsExactly('a', 256);
            assertThat(t.encode("abd")).containsExactly(257, 'd');
            assertThat(t.encode("ababab")).containsExactly(257, 257, 257);
        }
        BpeTokenizer t = handMade(false, "a b", "ab c"); // ab=256, abc=257
        assertThat(t.encode("abc")).containsExactly(257);
    }

    @Test
    void preTokenizerSplitsDigitsInThreesBeforeMerging() throws Exception {
        BpeTokenizer t = handMade(false, "3 4", "1 2", "12 3"); // 34=256, 12=257, 123=258
        // Without the split, 3-4 would merge first; Llama 3's regex cuts "12345" into "123" and "45".
        assertThat(t.encode("12345")).containsExactly(258, '4', '5');
    }

    @Test
    void spacesBecomeByteLevelCharactersAndSpecialTokensSplitOut() throws Exception {
        BpeTokenizer t = handMade(false, "Ġ a", "b c"); // Ġa=256, bc=257, <|im_start|>=258
        assertThat(BpeTokenizer.bytesToUnicode(" ".getBytes())).isEqualTo("Ġ");
        assertThat(t.encode("<|im_start|> abc")).containsExactly(258, 256, 257);
        assertThat(t.tokenBytes(256)).containsExactly(' ', 'a');
        assertThat(t.tokenBytes(258)).isEmpty();
        assertThat(t.decode(t.encode("<|im_start|> abc"))).isEqualTo(" abc");
    }

    @Test
    void generatedTokenizerRoundTripsAnyText() throws Exception {
        ModelGenerator.writeModel(dir, ModelGenerator.Spec.tiny());
        BpeTokenizer t =
                BpeTokenizer.read(dir.resolve("tokenizer.json"), ModelGenerator.BOS, ModelGenerator.IM_END, false);
        for (String s : List.of(
                "Hello, world!",
                "The quick brown fox jumps over the lazy dog.",
                "  two  spaces\n\n\tand tabs",
                "ünïcödé – 日本語 😀 emoji",
                "12345 6789 I'm we'll THEY'RE",
                "")) {
            int[] ids = t.encode(s);
            assertThat(t.decode(ids)).isEqualTo(s);
        }
        // Learned merges make common words shorter than their bytes.
        assertThat(t.encode(" the adapters").length).isLessThan(" the adapters".length());
        int[] chat = t.encode("<|im_start|>user\nhi<|im_end|>");
        assertThat(chat[0]).isEqualTo(t.tokenId(ModelGenerator.IM_START));
        assertThat(chat[chat.length - 1]).isEqualTo(t.eosTokenId()).isEqualTo(t.tokenId(ModelGenerator.IM_END));
        assertThat(t.decode(chat)).isEqualTo("user\nhi");
    }

    @Test
    void bosIsPrependedWhenAskedEvenBeforeTheBosTokensOwnText() throws Exception {
        ModelGenerator.writeModel(dir, ModelGenerator.Spec.tiny());
        BpeTokenizer t =
                BpeTokenizer.read(dir.resolve("tokenizer.json"), ModelGenerator.BOS, ModelGenerator.IM_END, true);
        int bos = t.bosTokenId();
        assertThat(t.encode("hi")[0]).isEqualTo(bos);
        assertThat(t.encode("hi", false)[0]).isNotEqualTo(bos);
        // Hugging Face's post-processor (and so vLLM) adds the BOS whatever the text holds: a prompt that spells it
        // out gets two.
        int[] ids = t.encode(ModelGenerator.BOS + "hi");
        assertThat(ids[0]).isEqualTo(bos);
        assertThat(ids[1]).isEqualTo(bos);
    }
}
