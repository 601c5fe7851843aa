package dev.patchbay.server.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.model.ChatMessage;
import dev.patchbay.engine.model.Model;
import dev.patchbay.server.http.ApiException;
import dev.patchbay.server.http.JsonFields;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * An OpenAI completions or chat-completions body, validated and tokenized: what the engine needs.
 *
 * @param prompts     one or more tokenized prompts (completions accept a batch)
 * @param promptTexts each prompt's text as given, or null where it was given as token ids (or is a chat)
 * @param maxTokens   null when the client left it to the model's remaining context
 */
record GenerationRequest(
        String model,
        List<int[]> prompts,
        List<String> promptTexts,
        Integer maxTokens,
        double temperature,
        double topP,
        int topK,
        Long seed,
        List<String> stop,
        List<Integer> stopTokenIds,
        boolean ignoreEos,
        int n,
        boolean stream,
        boolean includeUsage,
        LogprobsOptions logprobs) {

    /** {@code maxLogprobs}: the server's {@code --max-logprobs}, -1 for no limit. */
    static GenerationRequest parse(ObjectNode body, boolean chat, Model model, int maxLogprobs) {
        String name = JsonFields.string(body.get("model"), "model");
        List<String> promptTexts = new ArrayList<>();
        List<int[]> prompts = chat ? List.of(chatPrompt(body, model)) : completionPrompts(body, model, promptTexts);
        if (chat) promptTexts.add(null);
        Integer maxTokens = JsonFields.integer(body.get("max_tokens"), "max_tokens");
        if (chat) {
            // Chat's newer name wins over the older one when both are given.
            Integer maxCompletionTokens =
                    JsonFields.integer(body.get("max_completion_tokens"), "max_completion_tokens");
            if (maxCompletionTokens != null) maxTokens = maxCompletionTokens;
        }
        if (maxTokens != null && maxTokens < 1)
            throw ApiException.badRequest("max_tokens must be at least 1, got " + maxTokens, "max_tokens");
        double temperature = number(body, "temperature", 1.0);
        if (temperature < 0 || temperature > 2)
            throw ApiException.badRequest("temperature must be in [0, 2], got " + temperature, "temperature");
        double topP = number(body, "top_p", 1.0);
        if (!(topP > 0 && topP <= 1)) throw ApiException.badRequest("top_p must be in (0, 1], got " + topP, "top_p");
        Integer topK = JsonFields.integer(body.get("top_k"), "top_k");
        Integer n = JsonFields.integer(body.get("n"), "n");
        if (n != null && (n < 1 || n > 128)) throw ApiException.badRequest("n must be in [1, 128], got " + n, "n");
        Long seed = JsonFields.longInteger(body.get("seed"), "seed");
        List<String> stop = new ArrayList<>();
        JsonNode s = body.get("stop");
        if (s != null && !s.isNull()) {
            if (s.isTextual()) stop.add(s.asText());
            else if (s.isArray())
                s.forEach(x -> {
                    if (!x.isTextual())
                        throw ApiException.badRequest("stop must be a string or a list of strings", "stop");
                    stop.add(x.asText());
                });
            else throw ApiException.badRequest("stop must be a string or a list of strings", "stop");
        }
        stop.removeIf(String::isEmpty);
        List<Integer> stopIds = new ArrayList<>();
        JsonNode ids = JsonFields.list(body.get("stop_token_ids"), "stop_token_ids");
        if (ids != null) ids.forEach(x -> stopIds.add(JsonFields.integer(x, "stop_token_ids")));
        boolean stream = JsonFields.bool(body.get("stream"), "stream", false);
        JsonNode streamOptions = JsonFields.object(body.get("stream_options"), "stream_options");
        boolean includeUsage = streamOptions != null
                && JsonFields.bool(streamOptions.get("include_usage"), "stream_options.include_usage", false);
        boolean ignoreEos = JsonFields.bool(body.get("ignore_eos"), "ignore_eos", false);
        LogprobsOptions logprobs = LogprobsOptions.parse(
                body, chat, stream, maxLogprobs, model.tokenizer().vocabSize());
        return new GenerationRequest(
                name,
                prompts,
                Collections.unmodifiableList(promptTexts),
                maxTokens,
                temperature,
                topP,
                topK == null ? -1 : topK,
                seed,
                stop,
                stopIds,
                ignoreEos,
                n == null ? 1 : n,
                stream,
                stream && includeUsage,
                logprobs);
    }

    SamplingParams samplingParams(int maxTokens, int choice) {
        Long s = seed == null ? null : seed + choice;
        return new SamplingParams(
                maxTokens,
                temperature,
                topP,
                topK,
                s,
                stop,
                stopTokenIds,
                ignoreEos,
                n,
                logprobs.sample(),
                logprobs.prompt());
    }

    private static int[] chatPrompt(ObjectNode body, Model model) {
        boolean addGenerationPrompt = JsonFields.bool(body.get("add_generation_prompt"), "add_generation_prompt", true);
        // The rendered template already holds the special tokens the model expects.
        return model.tokenizer().encode(renderChat(model, chatMessages(body), addGenerationPrompt), false);
    }

    /** The body's {@code messages}: a non-empty list of objects with a string role and text content. */
    static List<ChatMessage> chatMessages(ObjectNode body) {
        JsonNode messages = body.get("messages");
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            throw ApiException.badRequest("messages must be a non-empty list", "messages");
        }
        List<ChatMessage> list = new ArrayList<>();
        for (JsonNode m : messages) {
            if (!m.isObject()) throw ApiException.badRequest("each of messages must be an object", "messages");
            if (!m.path("role").isTextual())
                throw ApiException.badRequest("each of messages needs a role that is a string", "messages");
            list.add(new ChatMessage(m.get("role").asText(), content(m.get("content"))));
        }
        return list;
    }

    /** The model's chat template applied; a model without one, or a template that fails on these messages, is a 400. */
    static String renderChat(Model model, List<ChatMessage> messages, boolean addGenerationPrompt) {
        try {
            return model.renderChat(messages, addGenerationPrompt);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage(), "messages");
        }
    }

    /** Message content is a string or a list of parts, of which the text parts count. */
    private static String content(JsonNode c) {
        if (c == null || c.isNull()) return "";
        if (c.isTextual()) return c.asText();
        if (c.isArray()) {
            StringBuilder sb = new StringBuilder();
            for (JsonNode part : c) {
                if (!part.isObject() || !"text".equals(part.path("type").asText(null))) {
                    throw ApiException.badRequest("only text content parts are supported in messages", "messages");
                }
                if (!part.path("text").isTextual())
                    throw ApiException.badRequest("the text of a part in messages must be a string", "messages");
                sb.append(part.get("text").asText());
            }
            return sb.toString();
        }
        throw ApiException.badRequest(
                "the content of each of messages must be a string or a list of parts", "messages");
    }

    /** The prompts, tokenized; {@code texts} gets each one's text, or null for token ids. */
    private static List<int[]> completionPrompts(ObjectNode body, Model model, List<String> texts) {
        JsonNode p = body.get("prompt");
        if (p == null || p.isNull()) throw ApiException.badRequest("prompt is required", "prompt");
        List<int[]> out = new ArrayList<>();
        if (p.isTextual()) {
            out.add(model.tokenizer().encode(p.asText()));
            texts.add(p.asText());
        } else if (p.isArray() && !p.isEmpty() && p.get(0).isInt()) {
            out.add(tokenIds(p, model));
            texts.add(null);
        } else if (p.isArray() && !p.isEmpty()) {
            for (JsonNode item : p) {
                if (item.isTextual()) out.add(model.tokenizer().encode(item.asText()));
                else if (item.isArray()) out.add(tokenIds(item, model));
                else throw ApiException.badRequest("prompt must be a string, a list of strings or token ids", "prompt");
                texts.add(item.isTextual() ? item.asText() : null);
            }
        } else {
            throw ApiException.badRequest("prompt must be a string, a list of strings or token ids", "prompt");
        }
        for (int[] ids : out) if (ids.length == 0) throw ApiException.badRequest("prompt must not be empty", "prompt");
        return out;
    }

    private static int[] tokenIds(JsonNode arr, Model model) {
        int[] ids = new int[arr.size()];
        int vocab = model.tokenizer().vocabSize();
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = arr.get(i);
            if (!t.isInt() || t.asInt() < 0 || t.asInt() >= vocab) {
                throw ApiException.badRequest(
                        "token id " + t + " is out of vocabulary range [0, " + vocab + ")", "prompt");
            }
            ids[i] = t.asInt();
        }
        return ids;
    }

    private static double number(ObjectNode body, String field, double dflt) {
        Double v = JsonFields.number(body.get(field), field);
        return v == null ? dflt : v;
    }
}
