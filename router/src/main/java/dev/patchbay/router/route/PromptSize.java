package dev.patchbay.router.route;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Estimates a request's prompt tokens from its JSON body, without the model's tokenizer: the router serves many
 * models and must not load them. Text counts a token per {@value #CHARS_PER_TOKEN} characters (the usual figure for
 * English with a BPE vocabulary); token-id prompts count exactly. Only the relative size matters: it spreads
 * prefill work between endpoints ({@link dev.patchbay.router.pick.PrefillQueueScorer}). Known to be rough: it
 * counts UTF-16 characters, so scripts with a token per character or two (CJK) come out several times too small,
 * and tool definitions and images are not counted.
 */
public final class PromptSize {
    static final int CHARS_PER_TOKEN = 4;
    /** Role markers and template text around each chat message. */
    static final int TOKENS_PER_MESSAGE = 4;

    private PromptSize() {}

    /** At least 1 for any request, as every prompt costs a prefill. */
    public static long estimateTokens(JsonNode body) {
        long tokens = 0;
        JsonNode messages = body.get("messages");
        if (messages != null && messages.isArray()) {
            for (JsonNode message : messages) {
                tokens += TOKENS_PER_MESSAGE + textTokens(message.get("content"));
            }
        }
        JsonNode prompt = body.get("prompt");
        if (prompt != null) {
            tokens += promptTokens(prompt);
        }
        return Math.max(1, tokens);
    }

    /** A completions prompt: a string, token ids, or a list of either. */
    private static long promptTokens(JsonNode prompt) {
        if (prompt.isTextual()) {
            return textTokens(prompt);
        }
        if (!prompt.isArray()) {
            return 0;
        }
        long tokens = 0;
        for (JsonNode element : prompt) {
            tokens += element.isNumber() ? 1 : promptTokens(element);
        }
        return tokens;
    }

    /** A message content: a string, or parts of which the text ones count. */
    private static long textTokens(JsonNode content) {
        if (content == null) {
            return 0;
        }
        if (content.isTextual()) {
            return (content.asText().length() + CHARS_PER_TOKEN - 1) / CHARS_PER_TOKEN;
        }
        long tokens = 0;
        if (content.isArray()) {
            for (JsonNode part : content) {
                tokens += textTokens(part.isTextual() ? part : part.get("text"));
            }
        }
        return tokens;
    }
}
