package dev.patchbay.launcher.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.sim.SimTokenizer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The simulated model's tokenizer ({@link SimTokenizer}) as a Hugging Face tokenizer directory
 * ({@code tokenizer.json}, {@code tokenizer_config.json}), for a load tool that needs a tokenizer to make prompts of a
 * given length and count the tokens it gets back: {@code aiperf --tokenizer DIR} loads it from disk without any
 * network access, and its token counts are the server's.
 *
 * <p>The file says what {@link SimTokenizer} does: the text is split into pieces by {@code " ?[A-Za-z]+|."}; a piece
 * that is one of its words (with the leading space) is that word's id; any other piece is one token per UTF-8 byte
 * (ids 0-255, written {@code <0xNN>} with byte fallback); id 256 is the end of text. A BPE model with no merges and
 * {@code ignore_merges} matches whole words only, so ids are the same both ways.
 */
public final class SimTokenizerFiles {
    private static final ObjectMapper JSON = new ObjectMapper();

    private SimTokenizerFiles() {}

    /** Writes {@code tokenizer.json} and {@code tokenizer_config.json} into {@code dir} (made if missing); returns it. */
    public static Path write(Path dir) throws IOException {
        Files.createDirectories(dir);
        SimTokenizer tokenizer = new SimTokenizer();
        String eos = "</s>";

        ObjectNode root = JSON.createObjectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        ObjectNode added = root.putArray("added_tokens").addObject();
        added.put("id", tokenizer.eosTokenId());
        added.put("content", eos);
        added.put("single_word", false);
        added.put("lstrip", false);
        added.put("rstrip", false);
        added.put("normalized", false);
        added.put("special", true);
        root.putNull("normalizer");
        ObjectNode pre = root.putObject("pre_tokenizer");
        pre.put("type", "Split");
        pre.putObject("pattern").put("Regex", " ?[A-Za-z]+|.");
        pre.put("behavior", "Isolated");
        pre.put("invert", false);
        root.putNull("post_processor");
        ObjectNode decoder = root.putObject("decoder");
        decoder.put("type", "Sequence");
        decoder.putArray("decoders")
                .add(JSON.createObjectNode().put("type", "ByteFallback"))
                .add(JSON.createObjectNode().put("type", "Fuse"));

        ObjectNode model = root.putObject("model");
        model.put("type", "BPE");
        model.putNull("dropout");
        model.putNull("unk_token");
        model.putNull("continuing_subword_prefix");
        model.putNull("end_of_word_suffix");
        model.put("fuse_unk", false);
        model.put("byte_fallback", true);
        model.put("ignore_merges", true);
        ObjectNode vocab = model.putObject("vocab");
        for (int b = 0; b < 256; b++) {
            vocab.put(String.format("<0x%02X>", b), b);
        }
        vocab.put(eos, tokenizer.eosTokenId());
        for (int id = tokenizer.firstWordId(); id < tokenizer.firstWordId() + tokenizer.numWords(); id++) {
            vocab.put(new String(tokenizer.tokenBytes(id), StandardCharsets.UTF_8), id);
        }
        model.putArray("merges");
        JSON.writeValue(dir.resolve("tokenizer.json").toFile(), root);

        ObjectNode config = JSON.createObjectNode();
        config.put("tokenizer_class", "PreTrainedTokenizerFast");
        config.put("eos_token", eos);
        config.put("model_max_length", 1_000_000);
        JSON.writeValue(dir.resolve("tokenizer_config.json").toFile(), config);
        return dir;
    }
}
