package dev.patchbay.server.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.exec.TokenLogprobs;
import dev.patchbay.engine.model.Tokenizer;
import dev.patchbay.server.http.Http;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The JSON of log probabilities as vLLM serves them: the completions API's legacy {@code tokens},
 * {@code token_logprobs}, {@code top_logprobs} and {@code text_offset} lists, chat's {@code content} list, and
 * vLLM's {@code prompt_logprobs}. Tokens are shown as their decoded text (a piece of a UTF-8 character as U+FFFD).
 */
final class LogprobsShapes {
    /** What vLLM reports for minus infinity, which JSON cannot carry. */
    private static final double FLOOR = -9999.0;

    private final Tokenizer tokenizer;

    LogprobsShapes(Tokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    String token(int id) {
        return new String(tokenizer.tokenBytes(id), StandardCharsets.UTF_8);
    }

    private static double value(float logprob) {
        return Math.max(logprob, FLOOR);
    }

    /**
     * Completions' logprobs of {@code tokens}, entry i from {@code logprobs.get(i)}, null where nothing predicts the
     * token (an echoed prompt's first). Each {@code top_logprobs} dict holds the token itself first, then the most
     * likely ones: up to N + 1 entries, as in vLLM. Offsets count characters (code points) from {@code textOffset}.
     */
    ObjectNode completion(int[] tokens, List<TokenLogprobs> logprobs, int textOffset) {
        ObjectNode out = Http.JSON.createObjectNode();
        ArrayNode strings = out.putArray("tokens");
        ArrayNode values = out.putArray("token_logprobs");
        ArrayNode tops = out.putArray("top_logprobs");
        ArrayNode offsets = out.putArray("text_offset");
        int offset = textOffset;
        for (int i = 0; i < tokens.length; i++) {
            String text = token(tokens[i]);
            TokenLogprobs lp = logprobs.get(i);
            strings.add(text);
            offsets.add(offset);
            offset += text.codePointCount(0, text.length());
            if (lp == null) {
                values.addNull();
                tops.addNull();
                continue;
            }
            values.add(value(lp.logprob()));
            ObjectNode top = tops.addObject();
            top.put(text, value(lp.logprob()));
            // Keyed by text, so tokens with the same text (pieces of UTF-8 characters) share one entry. The first
            // keeps it, so the entry of the token itself always shows its own value; vLLM lets the last win.
            for (int j = 0; j < lp.numTop(); j++) {
                if (!top.has(token(lp.topIds()[j]))) top.put(token(lp.topIds()[j]), value(lp.topLogprobs()[j]));
            }
        }
        return out;
    }

    /** The text offset after {@code tokens}, starting from {@code textOffset}. */
    int advance(int textOffset, int[] tokens) {
        for (int t : tokens) {
            String text = token(t);
            textOffset += text.codePointCount(0, text.length());
        }
        return textOffset;
    }

    /** Chat's {@code {"content": [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}}. */
    ObjectNode chat(int[] tokens, List<TokenLogprobs> logprobs) {
        ObjectNode out = Http.JSON.createObjectNode();
        ArrayNode content = out.putArray("content");
        for (int i = 0; i < tokens.length; i++) {
            TokenLogprobs lp = logprobs.get(i);
            ObjectNode entry = chatEntry(content.addObject(), tokens[i], lp.logprob());
            ArrayNode top = entry.putArray("top_logprobs");
            for (int j = 0; j < lp.numTop(); j++) chatEntry(top.addObject(), lp.topIds()[j], lp.topLogprobs()[j]);
        }
        return out;
    }

    private ObjectNode chatEntry(ObjectNode e, int id, float logprob) {
        e.put("token", token(id));
        e.put("logprob", value(logprob));
        // The token's own bytes, so pieces of one character can be joined back, as OpenAI means them.
        ArrayNode bytes = e.putArray("bytes");
        for (byte b : tokenizer.tokenBytes(id)) bytes.add(b & 0xFF);
        return e;
    }

    /**
     * vLLM's {@code prompt_logprobs}: null for the first prompt token, then for each token a dict from token id to
     * {@code {logprob, rank, decoded_token}}, the prompt's own token first, then the most likely ones.
     */
    ArrayNode prompt(List<TokenLogprobs> logprobs) {
        ArrayNode out = Http.JSON.createArrayNode();
        for (TokenLogprobs lp : logprobs) {
            if (lp == null) {
                out.addNull();
                continue;
            }
            ObjectNode dict = out.addObject();
            promptEntry(dict, lp.tokenId(), lp.logprob(), lp.rank());
            for (int j = 0; j < lp.numTop(); j++) {
                if (lp.topIds()[j] != lp.tokenId()) promptEntry(dict, lp.topIds()[j], lp.topLogprobs()[j], j + 1);
            }
        }
        return out;
    }

    private void promptEntry(ObjectNode dict, int id, float logprob, int rank) {
        ObjectNode e = dict.putObject(Integer.toString(id));
        e.put("logprob", value(logprob));
        e.put("rank", rank);
        e.put("decoded_token", token(id));
    }
}
