package dev.patchbay.server.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.Engine;
import dev.patchbay.engine.EngineRequest;
import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.RequestOutput;
import dev.patchbay.engine.RequestRejectedException;
import dev.patchbay.engine.clock.Clock;
import dev.patchbay.server.http.ApiException;
import dev.patchbay.server.http.EngineErrors;
import dev.patchbay.server.http.Http;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code POST /v1/completions} and {@code POST /v1/chat/completions}: submits one engine request per prompt and
 * choice, then answers with one JSON body or a stream of server-sent events ending in {@code data: [DONE]}.
 */
public final class GenerationHandler {
    /** Resolves the request's {@code model} to an adapter name (null for the base model), or throws 404. */
    public interface ModelResolver {
        String adapterFor(String model);
    }

    private final Engine engine;
    private final Clock clock;
    private final ModelResolver resolver;
    private final long maxBodyBytes;

    public GenerationHandler(Engine engine, Clock clock, ModelResolver resolver, long maxBodyBytes) {
        this.engine = engine;
        this.clock = clock;
        this.resolver = resolver;
        this.maxBodyBytes = maxBodyBytes;
    }

    private record ChoiceOutput(int choice, RequestOutput output) {}

    public void handle(ServerRequest req, ServerResponse res, boolean chat) {
        long arrival = clock.nanos();
        ObjectNode body = Http.readJsonObject(req, maxBodyBytes);
        GenerationRequest g = GenerationRequest.parse(body, chat, engine.model());
        String modelName = g.model() == null ? engine.config().servedModelName() : g.model();
        String adapter = resolver.adapterFor(modelName);
        LinkedBlockingQueue<ChoiceOutput> outputs = new LinkedBlockingQueue<>();
        List<Long> ids = new ArrayList<>();
        int promptTokens = 0;
        int choices = g.prompts().size() * g.n();
        try {
            for (int p = 0; p < g.prompts().size(); p++) {
                int[] prompt = g.prompts().get(p);
                promptTokens += prompt.length;
                int maxTokens = engine.contextLimit().maxTokens(prompt.length, g.maxTokens());
                for (int k = 0; k < g.n(); k++) {
                    int choice = p * g.n() + k;
                    ids.add(engine.submit(new EngineRequest(prompt, adapter, g.samplingParams(maxTokens, k), arrival,
                            out -> outputs.add(new ChoiceOutput(choice, out)))));
                }
            }
        } catch (RequestRejectedException e) {
            ids.forEach(engine::abort);
            throw EngineErrors.of(e);
        } catch (RuntimeException e) {
            ids.forEach(engine::abort);
            throw e;
        }
        String id = (chat ? "chatcmpl-" : "cmpl-") + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        long created = System.currentTimeMillis() / 1000;
        ResponseShapes shapes = new ResponseShapes(id, created, modelName, chat);
        if (g.stream()) {
            stream(res, shapes, outputs, ids, choices, promptTokens, g.includeUsage());
        } else {
            respond(res, shapes, outputs, ids, choices, promptTokens);
        }
    }

    private void respond(ServerResponse res, ResponseShapes shapes, LinkedBlockingQueue<ChoiceOutput> outputs,
                         List<Long> ids, int choices, int promptTokens) {
        StringBuilder[] text = new StringBuilder[choices];
        FinishReason[] reasons = new FinishReason[choices];
        int completionTokens = 0;
        int done = 0;
        String error = null;
        try {
            while (done < choices) {
                ChoiceOutput c = outputs.take();
                if (text[c.choice] == null) text[c.choice] = new StringBuilder();
                text[c.choice].append(c.output.textDelta());
                if (c.output.finished()) {
                    reasons[c.choice] = c.output.finishReason();
                    completionTokens += c.output.outputTokens();
                    if (c.output.finishReason() == FinishReason.ERROR) error = c.output.error();
                    done++;
                }
            }
        } catch (InterruptedException e) {
            ids.forEach(engine::abort);
            Thread.currentThread().interrupt();
            throw EngineErrors.shuttingDown();
        }
        if (error != null) throw new ApiException(500, error);
        ObjectNode body = shapes.response();
        ArrayNode arr = body.putArray("choices");
        for (int i = 0; i < choices; i++) arr.add(shapes.choice(i, text[i] == null ? "" : text[i].toString(), reasons[i]));
        body.set("usage", ResponseShapes.usage(promptTokens, completionTokens));
        Http.sendJson(res, body);
    }

    private void stream(ServerResponse res, ResponseShapes shapes, LinkedBlockingQueue<ChoiceOutput> outputs,
                        List<Long> ids, int choices, int promptTokens, boolean includeUsage) {
        res.header(HeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        res.header(HeaderNames.CACHE_CONTROL, "no-cache");
        boolean[] started = new boolean[choices];
        int done = 0;
        int completionTokens = 0;
        try (OutputStream out = res.outputStream()) {
            while (done < choices) {
                ChoiceOutput c = outputs.take();
                RequestOutput o = c.output;
                if (shapes.chat() && !started[c.choice]) {
                    started[c.choice] = true;
                    event(out, shapes.roleChunk(c.choice));
                }
                if (!o.textDelta().isEmpty() || o.finished()) {
                    event(out, shapes.chunk(c.choice, o.textDelta(), o.finishReason()));
                }
                if (o.finished()) {
                    done++;
                    completionTokens += o.outputTokens();
                }
            }
            if (includeUsage) {
                ObjectNode usage = shapes.usageChunk();
                usage.set("usage", ResponseShapes.usage(promptTokens, completionTokens));
                event(out, usage);
            }
            out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException | RuntimeException e) {
            // The client went away (the server reports it as an I/O or connection exception): stop generating for it.
            ids.forEach(engine::abort);
        } catch (InterruptedException e) {
            ids.forEach(engine::abort);
            Thread.currentThread().interrupt();
        }
    }

    private static void event(OutputStream out, ObjectNode chunk) throws IOException {
        out.write("data: ".getBytes(StandardCharsets.UTF_8));
        out.write(Http.toBytes(chunk));
        out.write("\n\n".getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}
