package dev.patchbay.engine.model;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** Text to token ids and back. Implementations are immutable and thread-safe. */
public interface Tokenizer {
    /** Encodes a completion prompt: special tokens the model wants around a prompt (a BOS) are added. */
    default int[] encode(String text) {
        return encode(text, true);
    }

    /**
     * Encodes text; with {@code addSpecialTokens} false nothing is added, as for a rendered chat template that
     * already holds its own BOS.
     */
    int[] encode(String text, boolean addSpecialTokens);

    /** The raw bytes a token stands for (UTF-8 pieces may be split across tokens); empty for special tokens. */
    byte[] tokenBytes(int tokenId);

    int vocabSize();

    /** The end-of-sequence token, or -1 when the model has none. */
    int eosTokenId();

    default String decode(int[] ids) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int id : ids) out.writeBytes(tokenBytes(id));
        return out.toString(StandardCharsets.UTF_8);
    }
}
