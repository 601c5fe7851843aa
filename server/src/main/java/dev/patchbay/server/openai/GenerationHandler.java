package dev.patchbay.server.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.Engine;
import dev.patchbay.engine.EngineRequest;
import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.RequestOutput;
import dev.patchbay.engine.RequestRejectedException;
import dev.patchbay.engine.clock.Clock;
import dev.patchbay.engine.exec.TokenLogprobs;
import dev.patchbay.server.http.ApiException;
import dev.patchbay.server.http.EngineErrors;
import dev.patchbay.server.http.Http;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Headers;
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
    /**
     * A request with this header set to {@code true} starts only if its adapter can have a batch slot at once, else it
     * is refused with 503 and {@link #SLOT_REFUSED}: Patchbay's router asks so of the requests it holds for a slot,
     * so that several routers cannot queue requests behind one slot each thought free. Set to a number {@code n}, it
     * asks so only of Envoy's attempts before the {@code n}th ({@link #ENVOY_ATTEMPT_COUNT}): the picker behind Envoy
     * names {@code n} endpoints, Envoy retries a refusal on the next, and the last must take the request whatever
     * it finds. Without an attempt count nothing is refused: a retry that could not be told apart would be refused
     * again.
     */
    public static final HeaderName REQUIRE_SLOT = HeaderNames.create("X-Patchbay-Require-Slot");
    /** Envoy's count of attempts at this request, 1 for the first (a route's {@code include_request_attempt_count}). */
    public static final HeaderName ENVOY_ATTEMPT_COUNT = HeaderNames.create("X-Envoy-Attempt-Count");
    /** Set to {@code true} on the 503 of a request {@link #REQUIRE_SLOT} refused: the router tries again later. */
    public static final HeaderName SLOT_REFUSED = HeaderNames.create("X-Patchbay-Slot-Refused");

    private final ModelResolver resolver;
    private final long maxBodyBytes;

    public GenerationHandler(Engine engine, Clock clock, ModelResolver resolver, long maxBodyBytes) {
        this.engine = engine;
        this.clock = clock;
        this.resolver = resolver;
        this.maxBodyBytes = maxBodyBytes;
    }

    private record ChoiceOutput(int choice, RequestOutput output) {}

    /** Whether the request may be refused for want of a slot ({@link #REQUIRE_SLOT}). */
    static boolean onlyWithSlot(Headers headers) {
        String required = headers.first(REQUIRE_SLOT).map(String::trim).orElse("");
        if (required.equalsIgnoreCase("true")) {
            return true;
        }
        try {
            int attempts = Integer.parseInt(required);
            return headers.first(ENVOY_ATTEMPT_COUNT)
                    .map(count -> Integer.parseInt(count.trim()) < attempts)
                    .orElse(false);
        } catch (NumberFormatException notANumber) {
            return false; // absent, or a value no router sends: the request starts as any other
        }
    }

    public void handle(ServerRequest req, ServerResponse res, boolean chat) {
        long arrival = clock.nanos();
        boolean onlyWithSlot = onlyWithSlot(req.headers());
        ObjectNode body = Http.readJsonObject(req, maxBodyBytes);
        GenerationRequest g = GenerationRequest.parse(
                body, chat, engine.model(), engine.config().maxLogprobs());
        String modelName = g.model() == null ? engine.config().servedModelName() : g.model();
        String adapter = resolver.adapterFor(modelName);
        LinkedBlockingQueue<ChoiceOutput> outputs = new LinkedBlockingQueue<>();
        List<Long> ids = new ArrayList<>();
        int promptTokens = 0;
        int choices = g.prompts().size() * g.n();
        ChoiceState[] states = new ChoiceState[choices];
        try {
            for (int p = 0; p < g.prompts().size(); p++) {
                int[] prompt = g.prompts().get(p);
                promptTokens += prompt.length;
                int maxTokens = engine.contextLimit().maxTokens(prompt.length, g.maxTokens());
                // Only an echo needs the prompt's text; a prompt of token ids has it decoded.
                String promptText = !g.logprobs().echo()
                        ? null
                        : g.promptTexts().get(p) != null
                                ? g.promptTexts().get(p)
                                : engine.model().tokenizer().decode(prompt);
                for (int k = 0; k < g.n(); k++) {
                    int choice = p * g.n() + k;
                    states[choice] =
                            new ChoiceState(prompt, promptText, g.logprobs().echo());
                    EngineRequest request = new EngineRequest(
                            prompt,
                            adapter,
                            g.samplingParams(maxTokens, k),
                            arrival,
                            out -> outputs.add(new ChoiceOutput(choice, out)));
                    // The first choice takes the slot; the others join its adapter's requests.
                    ids.add(onlyWithSlot && ids.isEmpty() ? engine.submitIfSlot(request) : engine.submit(request));
                }
            }
        } catch (RequestRejectedException e) {
            ids.forEach(engine::abort);
            if (e.reason() == RequestRejectedException.Reason.NO_SLOT) res.header(SLOT_REFUSED, "true");
            throw EngineErrors.of(e);
        } catch (RuntimeException e) {
            ids.forEach(engine::abort);
            throw e;
        }
        String id = (chat ? "chatcmpl-" : "cmpl-")
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        long created = System.currentTimeMillis() / 1000;
        ResponseShapes shapes = new ResponseShapes(id, created, modelName, chat);
        Answer answer = new Answer(
                shapes,
                new LogprobsShapes(engine.model().tokenizer()),
                g.logprobs(),
                states,
                outputs,
                ids,
                promptTokens);
        if (g.stream()) {
            stream(res, answer, g.includeUsage());
        } else {
            respond(res, answer);
        }
    }

    /** What answering needs: the shapes, what was asked for, each choice's state, and where outputs arrive. */
    private record Answer(
            ResponseShapes shapes,
            LogprobsShapes logprobShapes,
            LogprobsOptions logprobs,
            ChoiceState[] states,
            LinkedBlockingQueue<ChoiceOutput> outputs,
            List<Long> ids,
            int promptTokens) {}

    private void respond(ServerResponse res, Answer a) {
        int choices = a.states().length;
        int completionTokens = 0;
        int done = 0;
        String error = null;
        try {
            while (done < choices) {
                ChoiceOutput c = a.outputs().take();
                a.states()[c.choice].add(c.output);
                if (c.output.finished()) {
                    completionTokens += c.output.outputTokens();
                    if (c.output.finishReason() == FinishReason.ERROR) error = c.output.error();
                    done++;
                }
            }
        } catch (InterruptedException e) {
            a.ids().forEach(engine::abort);
            Thread.currentThread().interrupt();
            throw EngineErrors.shuttingDown();
        }
        if (error != null) throw new ApiException(500, error);
        ResponseShapes shapes = a.shapes();
        ObjectNode body = shapes.response();
        ArrayNode arr = body.putArray("choices");
        boolean wantsLogprobs = a.logprobs().sample() != null;
        for (int i = 0; i < choices; i++) {
            ChoiceState s = a.states()[i];
            JsonNode logprobs = !wantsLogprobs
                    ? null
                    : shapes.chat() ? s.chatLogprobs(a.logprobShapes()) : s.completionLogprobs(a.logprobShapes());
            JsonNode promptLogprobs =
                    s.promptLogprobs() == null ? null : a.logprobShapes().prompt(s.promptLogprobs());
            arr.add(shapes.choice(i, s.text(), s.reason(), logprobs, promptLogprobs));
        }
        if (shapes.chat()) {
            // vLLM's chat answer carries the prompt's log probabilities once, beside the choices.
            List<TokenLogprobs> prompt = a.states()[0].promptLogprobs();
            body.set(
                    "prompt_logprobs", prompt == null ? null : a.logprobShapes().prompt(prompt));
        }
        body.set("usage", ResponseShapes.usage(a.promptTokens(), completionTokens));
        Http.sendJson(res, body);
    }

    private void stream(ServerResponse res, Answer a, boolean includeUsage) {
        res.header(HeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        res.header(HeaderNames.CACHE_CONTROL, "no-cache");
        ResponseShapes shapes = a.shapes();
        List<Long> ids = a.ids();
        int choices = a.states().length;
        boolean wantsLogprobs = a.logprobs().sample() != null;
        boolean[] started = new boolean[choices];
        int done = 0;
        int completionTokens = 0;
        try (OutputStream out = res.outputStream()) {
            while (done < choices) {
                ChoiceOutput c = a.outputs().take();
                RequestOutput o = c.output;
                ChoiceState s = a.states()[c.choice];
                if (shapes.chat() && !started[c.choice]) {
                    started[c.choice] = true;
                    event(out, shapes.roleChunk(c.choice));
                }
                if (s.hasChunk(o, wantsLogprobs)) {
                    // Each chunk carries the log probabilities of its own tokens.
                    JsonNode logprobs = !wantsLogprobs
                            ? null
                            : shapes.chat()
                                    ? a.logprobShapes().chat(o.newTokenIds(), o.logprobs())
                                    : s.chunkCompletionLogprobs(a.logprobShapes(), o);
                    event(out, shapes.chunk(c.choice, s.chunkText(o), o.finishReason(), logprobs));
                    s.chunkSent();
                }
                if (o.finished()) {
                    done++;
                    completionTokens += o.outputTokens();
                }
            }
            if (includeUsage) {
                ObjectNode usage = shapes.usageChunk();
                usage.set("usage", ResponseShapes.usage(a.promptTokens(), completionTokens));
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
