package dev.patchbay.router.route;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.router.config.ModelRewriter;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.PickResult;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.EndpointStatus;
import dev.patchbay.router.pool.RequestInFlight;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Everything between a request's bytes and the ranked endpoints, independent of how the request
 * arrived: the HTTP proxy and an Envoy external processor both call {@link #decide}.
 *
 * <p>A request is sheddable when it carries {@code x-patchbay-sheddable: true}, or an
 * {@code x-gateway-inference-objective} whose configured priority is negative (the gateway's
 * meaning of sheddable). Model names are classified by {@link ModelCatalog}.
 */
public final class RouteDecider {
    public static final String SHEDDABLE_HEADER = "x-patchbay-sheddable";
    public static final String OBJECTIVE_HEADER = "x-gateway-inference-objective";
    /** Larger request bodies are refused with 413 by every face: the router holds a whole body to read its model. */
    public static final int MAX_BODY_BYTES = 16 * 1024 * 1024;
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Every ready endpoint may be picked. */
    public static final Predicate<Endpoint> ANY_ENDPOINT = endpoint -> true;

    private final EndpointPool pool;
    private final EndpointPicker picker;
    private final ModelRewriter rewriter;
    private final ModelCatalog catalog;
    private final Map<String, Integer> objectives;

    public RouteDecider(EndpointPool pool, EndpointPicker picker, RouterConfig config, ModelRewriter rewriter) {
        this.pool = pool;
        this.picker = picker;
        this.rewriter = rewriter;
        this.catalog = new ModelCatalog(config, rewriter);
        this.objectives = config.objectives();
    }

    /**
     * Decides for a completions request.
     *
     * @param body   the request body (JSON with a {@code model})
     * @param header a request header by lower-case name
     */
    public RouteDecision decide(byte[] body, Function<String, Optional<String>> header) {
        return decide(body, header, ANY_ENDPOINT);
    }

    /**
     * Decides among the endpoints {@code eligible} accepts only (the Endpoint Picker Protocol's subset hint): none
     * of them ready is a 503.
     */
    public RouteDecision decide(byte[] body, Function<String, Optional<String>> header, Predicate<Endpoint> eligible) {
        ObjectNode json;
        try {
            JsonNode parsed = JSON.readTree(body);
            if (!(parsed instanceof ObjectNode object)) {
                return RouteDecision.refuse(OpenAiError.badRequest("the request body must be a JSON object", null, null), null);
            }
            json = object;
        } catch (java.io.IOException e) {
            return RouteDecision.refuse(OpenAiError.badRequest("the request body is not valid JSON", null, null), null);
        }
        JsonNode modelNode = json.get("model");
        if (modelNode == null || !modelNode.isTextual() || modelNode.asText().isBlank()) {
            return RouteDecision.refuse(OpenAiError.badRequest("you must provide a model parameter", "model", null), null);
        }
        String requested = modelNode.asText();
        String model = rewriter.rewrite(requested);
        byte[] forwarded = body;
        if (!model.equals(requested)) {
            json.put("model", model);
            try {
                forwarded = JSON.writeValueAsBytes(json);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("re-serialising a parsed body failed", e);
            }
        }
        ModelCatalog.Kind kind = catalog.classify(model, pool.statuses());
        if (kind == ModelCatalog.Kind.UNKNOWN) {
            return RouteDecision.refuse(OpenAiError.badRequest("the model '" + model + "' does not exist", "model",
                    "model_not_found"), null);
        }
        PickRequest request = new PickRequest(model, kind == ModelCatalog.Kind.BASE_MODEL, isSheddable(header));
        return pick(request, forwarded, forwarded != body, PromptSize.estimateTokens(json), eligible);
    }

    /**
     * The decided request goes to {@code target} now: its prompt counts in the endpoint's prefill tally, and when
     * the picker counts its own picks, the request counts in the endpoint's metrics until a scrape shows it
     * ({@link RequestInFlight}). The caller reports the answer's first byte and its end on the handle.
     */
    public RequestInFlight sent(RouteDecision decision, EndpointState target) {
        PickRequest request = decision.request();
        String adapter = request == null || request.baseModel() ? null : request.model();
        return pool.sent(target.endpoint(), adapter, decision.promptTokens(),
                picker.countsOwnPicks() && request != null && !request.model().isEmpty());
    }

    /**
     * What the pool knows of {@code endpoint} now, ready or not, once a scrape of it has succeeded: for bookkeeping
     * against an endpoint the router did not rank first (one a data plane's retry or its own fallback served).
     */
    public Optional<EndpointState> stateOf(Endpoint endpoint) {
        for (EndpointStatus status : pool.statuses()) {
            if (status.endpoint().equals(endpoint) && status.metrics() != null) {
                return Optional.of(new EndpointState(endpoint, status.metrics(), pool.promptTokensInFlight(endpoint)));
            }
        }
        return Optional.empty();
    }

    /** Decides for a request without a model (the model list): any ready endpoint will do. */
    public RouteDecision decideWithoutModel() {
        return decideWithoutModel(ANY_ENDPOINT);
    }

    public RouteDecision decideWithoutModel(Predicate<Endpoint> eligible) {
        return pick(new PickRequest("", true, false), null, false, 0, eligible);
    }

    private RouteDecision pick(PickRequest request, byte[] body, boolean rewritten, long promptTokens,
                               Predicate<Endpoint> eligible) {
        EndpointPool.Candidates candidates = pool.candidates(eligible);
        PickResult result = picker.pick(request, candidates.states());
        return switch (result.outcome()) {
            case NO_ENDPOINT -> RouteDecision.refuse(OpenAiError.noEndpoint("no model server is ready"), request);
            case SHED -> RouteDecision.refuse(OpenAiError.shed(), request);
            case PICKED -> new RouteDecision(null, request, body, rewritten, result.ranked(), promptTokens,
                    candidates.stale());
        };
    }

    private boolean isSheddable(Function<String, Optional<String>> header) {
        if (header.apply(SHEDDABLE_HEADER).map(v -> v.trim().equalsIgnoreCase("true")).orElse(false)) {
            return true;
        }
        return header.apply(OBJECTIVE_HEADER)
                .map(objective -> objectives.getOrDefault(objective.trim(), 0) < 0)
                .orElse(false);
    }
}
