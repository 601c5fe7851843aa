package dev.patchbay.server.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.FinishReason;
import dev.patchbay.server.http.Http;

/** The JSON shapes of OpenAI completion and chat-completion responses and stream chunks, as vLLM serves them. */
record ResponseShapes(String id, long created, String model, boolean chat) {

    ObjectNode response() {
        ObjectNode r = Http.JSON.createObjectNode();
        r.put("id", id);
        r.put("object", chat ? "chat.completion" : "text_completion");
        r.put("created", created);
        r.put("model", model);
        return r;
    }

    /** {@code logprobs} and (completions only) {@code promptLogprobs} are null when not asked for. */
    ObjectNode choice(int index, String text, FinishReason reason, JsonNode logprobs, JsonNode promptLogprobs) {
        ObjectNode c = Http.JSON.createObjectNode();
        c.put("index", index);
        if (chat) {
            ObjectNode m = c.putObject("message");
            m.put("role", "assistant");
            m.put("content", text);
        } else {
            c.put("text", text);
        }
        c.set("logprobs", logprobs);
        c.put("finish_reason", reason == null ? null : reason.label());
        c.putNull("stop_reason");
        if (!chat) c.set("prompt_logprobs", promptLogprobs);
        return c;
    }

    private ObjectNode chunkBase() {
        ObjectNode r = Http.JSON.createObjectNode();
        r.put("id", id);
        r.put("object", chat ? "chat.completion.chunk" : "text_completion");
        r.put("created", created);
        r.put("model", model);
        return r;
    }

    /** The first chunk of a chat choice carries the assistant role and no content. */
    ObjectNode roleChunk(int index) {
        ObjectNode r = chunkBase();
        ObjectNode c = r.putArray("choices").addObject();
        c.put("index", index);
        c.putObject("delta").put("role", "assistant").put("content", "");
        c.putNull("logprobs");
        c.putNull("finish_reason");
        return r;
    }

    ObjectNode chunk(int index, String text, FinishReason reason, JsonNode logprobs) {
        ObjectNode r = chunkBase();
        ObjectNode c = r.putArray("choices").addObject();
        c.put("index", index);
        if (chat) c.putObject("delta").put("content", text);
        else c.put("text", text);
        c.set("logprobs", logprobs);
        c.put("finish_reason", reason == null ? null : reason.label());
        return r;
    }

    /** With {@code stream_options.include_usage}, a last chunk with no choices carries the usage. */
    ObjectNode usageChunk() {
        ObjectNode r = chunkBase();
        r.putArray("choices");
        return r;
    }

    static ObjectNode usage(int prompt, int completion) {
        ObjectNode u = Http.JSON.createObjectNode();
        u.put("prompt_tokens", prompt);
        u.put("total_tokens", prompt + completion);
        u.put("completion_tokens", completion);
        return u;
    }
}
