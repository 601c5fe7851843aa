package dev.patchbay.server.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.server.http.ApiException;
import dev.patchbay.server.http.JsonFields;

/**
 * The log probabilities a completions or chat body asks for, checked against {@code --max-logprobs}.
 * Completions: {@code logprobs} (an integer), {@code echo}, {@code prompt_logprobs}; chat: {@code logprobs} (a
 * boolean), {@code top_logprobs}, {@code prompt_logprobs}. As in vLLM, -1 means the whole vocabulary, and
 * {@code echo} with {@code logprobs} also asks for the prompt's, as many per position as {@code logprobs}.
 *
 * @param sample  most likely tokens to report beside each generated token, or null for no log probabilities
 * @param prompt  the same for prompt tokens, or null
 * @param echo    completions only: the answer starts with the prompt
 */
record LogprobsOptions(Integer sample, Integer prompt, boolean echo) {

    static LogprobsOptions parse(ObjectNode body, boolean chat, boolean stream, int maxLogprobs, int vocab) {
        Integer sample;
        if (chat) {
            boolean wanted = JsonFields.bool(body.get("logprobs"), "logprobs", false);
            Integer top = count(body, "top_logprobs", maxLogprobs, vocab);
            if (top != null && !wanted) {
                throw ApiException.badRequest("top_logprobs needs logprobs set to true", "top_logprobs");
            }
            sample = wanted ? (top == null ? 0 : top) : null;
        } else {
            sample = count(body, "logprobs", maxLogprobs, vocab);
        }
        boolean echo = !chat && JsonFields.bool(body.get("echo"), "echo", false);
        Integer prompt = count(body, "prompt_logprobs", maxLogprobs, vocab);
        if (prompt != null && stream) {
            throw ApiException.badRequest("prompt_logprobs is not available when stream is true", "prompt_logprobs");
        }
        if (prompt == null && echo) prompt = sample;
        return new LogprobsOptions(sample, prompt, echo);
    }

    /** A count field: an integer in [0, max], or -1 for the whole vocabulary when that is within the limit. */
    private static Integer count(ObjectNode body, String field, int maxLogprobs, int vocab) {
        Integer n = JsonFields.integer(body.get(field), field);
        if (n == null) return null;
        if (n < -1) throw ApiException.badRequest(field + " must be a non-negative integer or -1, got " + n, field);
        int resolved = n == -1 ? vocab : n;
        if (maxLogprobs != -1 && resolved > maxLogprobs) {
            String what = n == -1 ? "-1 (the whole vocabulary of " + vocab + " tokens)" : String.valueOf(n);
            throw ApiException.badRequest(
                    field + " must be at most " + maxLogprobs + " (--max-logprobs), got " + what, field);
        }
        return resolved;
    }
}
