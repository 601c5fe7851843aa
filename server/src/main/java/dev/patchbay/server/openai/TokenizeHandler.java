package dev.patchbay.server.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.Engine;
import dev.patchbay.engine.model.Model;
import dev.patchbay.server.http.ApiException;
import dev.patchbay.server.http.Http;
import dev.patchbay.server.http.JsonFields;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * vLLM's {@code POST /tokenize} (a prompt, or chat messages through the chat template, to token ids) and
 * {@code POST /detokenize} (token ids to text), with the base model's tokenizer, which its adapters share.
 */
public final class TokenizeHandler {
    private final Engine engine;
    private final GenerationHandler.ModelResolver resolver;
    private final long maxBodyBytes;

    public TokenizeHandler(Engine engine, GenerationHandler.ModelResolver resolver, long maxBodyBytes) {
        this.engine = engine;
        this.resolver = resolver;
        this.maxBodyBytes = maxBodyBytes;
    }

    /**
     * {@code prompt} is encoded with special tokens added unless {@code add_special_tokens} is false; {@code messages}
     * are rendered (with the generation prompt unless {@code add_generation_prompt} is false) and encoded without
     * them, since the template writes its own: vLLM's defaults for each.
     */
    public void tokenize(ServerRequest req, ServerResponse res) {
        ObjectNode body = Http.readJsonObject(req, maxBodyBytes);
        checkModel(body);
        Model model = engine.model();
        String prompt = JsonFields.string(body.get("prompt"), "prompt");
        boolean chat = JsonFields.list(body.get("messages"), "messages") != null;
        if (chat == (prompt != null)) {
            throw ApiException.badRequest(
                    "Either prompt or messages must be given, not " + (chat ? "both" : "neither"));
        }
        boolean returnTokenStrs = JsonFields.bool(body.get("return_token_strs"), "return_token_strs", false);
        int[] ids;
        if (chat) {
            boolean addGenerationPrompt =
                    JsonFields.bool(body.get("add_generation_prompt"), "add_generation_prompt", true);
            boolean addSpecialTokens = JsonFields.bool(body.get("add_special_tokens"), "add_special_tokens", false);
            String text =
                    GenerationRequest.renderChat(model, GenerationRequest.chatMessages(body), addGenerationPrompt);
            ids = model.tokenizer().encode(text, addSpecialTokens);
        } else {
            boolean addSpecialTokens = JsonFields.bool(body.get("add_special_tokens"), "add_special_tokens", true);
            ids = model.tokenizer().encode(prompt, addSpecialTokens);
        }
        ObjectNode out = Http.JSON.createObjectNode();
        out.put("count", ids.length);
        out.put("max_model_len", engine.config().maxModelLen());
        ArrayNode tokens = out.putArray("tokens");
        for (int id : ids) tokens.add(id);
        if (returnTokenStrs) {
            ArrayNode strs = out.putArray("token_strs");
            for (int id : ids) strs.add(model.tokenString(id));
        } else {
            out.putNull("token_strs"); // as vLLM's response model renders a field not asked for
        }
        Http.sendJson(res, out);
    }

    /** Special tokens are written out, as vLLM's detokenize does. */
    public void detokenize(ServerRequest req, ServerResponse res) {
        ObjectNode body = Http.readJsonObject(req, maxBodyBytes);
        checkModel(body);
        JsonNode list = JsonFields.list(body.get("tokens"), "tokens");
        if (list == null) throw ApiException.badRequest("tokens is required", "tokens");
        int vocab = engine.model().tokenizer().vocabSize();
        int[] ids = new int[list.size()];
        for (int i = 0; i < ids.length; i++) {
            Integer id = JsonFields.integer(list.get(i), "tokens");
            if (id == null) throw ApiException.badRequest("tokens must hold integers, got null", "tokens");
            if (id < 0 || id >= vocab) {
                throw ApiException.badRequest(
                        "token id " + id + " is out of vocabulary range [0, " + vocab + ")", "tokens");
            }
            ids[i] = id;
        }
        ObjectNode out = Http.JSON.createObjectNode();
        out.put("prompt", engine.model().detokenize(ids));
        Http.sendJson(res, out);
    }

    /** An absent model means the base model; a name must be the base model or an adapter (404 otherwise). */
    private void checkModel(ObjectNode body) {
        String name = JsonFields.string(body.get("model"), "model");
        if (name != null) resolver.adapterFor(name);
    }
}
