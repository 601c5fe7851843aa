package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.model.ModelConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The vocabulary of a {@code tokenizer.json} by id, as the file spells each token ({@code "Ġworld"},
 * {@code "<|im_end|>"}), and which tokens are special: what {@code /tokenize} reports as token strings and what
 * {@code /detokenize} writes out for special tokens, which generated text leaves out.
 */
final class TokenPieces {
    private final String[] pieces;
    private final boolean[] special;

    private TokenPieces(String[] pieces, boolean[] special) {
        this.pieces = pieces;
        this.special = special;
    }

    /** Reads the pieces of a tokenizer the model has already read (so the file is known to be well formed). */
    static TokenPieces read(Path tokenizerJson, int size) throws IOException {
        JsonNode root;
        try {
            root = ModelConfig.readTree(tokenizerJson);
        } catch (IOException e) {
            throw new IOException(tokenizerJson + ": " + e.getMessage(), e);
        }
        String[] pieces = new String[size];
        boolean[] special = new boolean[size];
        for (var e : root.path("model").path("vocab").properties()) {
            int id = e.getValue().asInt(-1);
            if (id >= 0 && id < size) pieces[id] = e.getKey();
        }
        for (JsonNode t : root.path("added_tokens")) {
            int id = t.path("id").asInt(-1);
            if (id < 0 || id >= size) continue;
            pieces[id] = t.path("content").asText("");
            special[id] = t.path("special").asBoolean(false);
        }
        for (int i = 0; i < size; i++) if (pieces[i] == null) pieces[i] = "";
        return new TokenPieces(pieces, special);
    }

    String piece(int id) {
        return id >= 0 && id < pieces.length ? pieces[id] : "";
    }

    /** Ordinary tokens' bytes decoded together (a character may span tokens), special tokens as their text. */
    String decode(int[] ids, BpeTokenizer tokenizer) {
        StringBuilder out = new StringBuilder();
        ByteArrayOutputStream run = new ByteArrayOutputStream();
        for (int id : ids) {
            if (id >= 0 && id < special.length && special[id]) {
                out.append(run.toString(StandardCharsets.UTF_8)).append(pieces[id]);
                run.reset();
            } else {
                run.writeBytes(tokenizer.tokenBytes(id));
            }
        }
        return out.append(run.toString(StandardCharsets.UTF_8)).toString();
    }
}
