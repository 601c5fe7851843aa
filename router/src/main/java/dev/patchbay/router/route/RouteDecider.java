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
import dev.patchbay.router.pick.SlotWaitQueue;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.EndpointStatus;
import dev.patchbay.router.pool.RequestInFlight;
import dev.patchbay.router.pool.ServedModels;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Everything between a request's bytes and the ranked endpoints, independent of how the request
 * arrived: the HTTP proxy and an Envoy external processor both call {@link #decide}.
 *
 * <p>With a profile whose adapter requests wait for slots ({@link EndpointPicker#slotWaitNanos}), a request whose
 * best endpoint has no slot for its adapter waits in {@link #decide} (on the caller's thread: both faces run a
 * request on a virtual thread) until a pick after some scrape round finds it one, or for the profile's longest
 * wait ({@link SlotWaitQueue}).
 *
 * <p>A request is sheddable when it carries {@code x-patchbay-sheddable: true}, or an
 * {@code x-gateway-inference-objective} whose configured priority is negative (the gateway's
 * meaning of sheddable). Model names are classified by {@link ModelCatalog}, which also says where a model is served:
 * a request is decided only among the endpoints that list its model on {@code /v1/models} when any does
 * ({@link ModelCatalog#servedBy}), whichever face asks.
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
    /** Where adapter requests wait for a slot; null when the profile does not hold them. */
    private final SlotWaitQueue slotWait;

    public RouteDecider(EndpointPool pool, EndpointPicker picker, RouterConfig config, ModelRewriter rewriter) {
        this.pool = pool;
        this.picker = picker;
        this.slotWait = pool.slotWaitFor(picker);
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
        Map<Endpoint, ServedModels> lists = pool.servedModels();
        ModelCatalog.Kind kind = catalog.classify(model, pool.statuses(), lists.values());
        if (kind == ModelCatalog.Kind.UNKNOWN) {
            return RouteDecision.refuse(OpenAiError.badRequest("the model '" + model + "' does not exist", "model",
                    "model_not_found"), null);
        }
        PickRequest request = new PickRequest(model, kind == ModelCatalog.Kind.BASE_MODEL, isSheddable(header));
        return pick(request, forwarded, forwarded != body, PromptSize.estimateTokens(json),
                both(eligible, catalog.servedBy(model, lists)));
    }

    /** Endpoints both accept; a value when both are (records), so that equal requests' repick keys are equal. */
    private static Predicate<Endpoint> both(Predicate<Endpoint> first, Predicate<Endpoint> second) {
        if (second == ANY_ENDPOINT) {
            return first;
        }
        return first == ANY_ENDPOINT ? second : new Both(first, second);
    }

    private record Both(Predicate<Endpoint> first, Predicate<Endpoint> second) implements Predicate<Endpoint> {
        @Override
        public boolean test(Endpoint endpoint) {
            return first.test(endpoint) && second.test(endpoint);
        }
    }

    /**
     * The decided request goes to {@code target} now: its prompt counts in the endpoint's prefill tally, and when
     * the picker counts its own picks, the request counts in the endpoint's metrics until a scrape shows it
     * ({@link RequestInFlight}). The caller reports the answer's first byte and its end on the handle.
     */
    public RequestInFlight sent(RouteDecision decision, EndpointState target) {
        if (decision.reserved() != null) {
            RequestInFlight reserved = decision.reserved().take(target.endpoint());
            if (reserved != null) {
                return reserved;
            }
            decision.reserved().dropIfUntaken(); // it goes elsewhere first: the recorded send never happens
        }
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
        if (slotWait != null) {
            SlotWaiter waiter = new SlotWaiter(request, body, rewritten, promptTokens, eligible);
            if (slotWait.hold(request, result, waiter)) {
                return waiter.await();
            }
        }
        return decision(result, request, body, rewritten, promptTokens, candidates.stale());
    }

    private static RouteDecision decision(PickResult result, PickRequest request, byte[] body, boolean rewritten,
                                          long promptTokens, boolean stale) {
        return switch (result.outcome()) {
            case NO_ENDPOINT -> RouteDecision.refuse(OpenAiError.noEndpoint("no model server is ready"), request);
            case SHED -> RouteDecision.refuse(OpenAiError.shed(), request);
            case PICKED -> new RouteDecision(null, request, body, rewritten, result.ranked(), promptTokens, stale);
        };
    }

    /** Requests waiting for a slot now: the router's own gauge. */
    public int waitingForSlot() {
        return slotWait == null ? 0 : slotWait.size();
    }

    /** Requests that have waited for a slot, since the start. */
    public long waitedForSlot() {
        return slotWait == null ? 0 : slotWait.heldTotal();
    }

    private record RepickKey(PickRequest request, Predicate<Endpoint> eligible) {
    }

    /** One request waiting in {@link #slotWait}, on the thread that called {@link #decide}. */
    private final class SlotWaiter implements SlotWaitQueue.Waiter {
        /** How long past its longest wait a request waits for a release that a stuck scrape round withholds. */
        private static final long RELEASE_GRACE_NANOS = 1_000_000_000L;
        private final PickRequest request;
        private final byte[] body;
        private final boolean rewritten;
        private final long promptTokens;
        private final Predicate<Endpoint> eligible;
        private final CompletableFuture<RouteDecision> released = new CompletableFuture<>();
        private boolean stale; // the last repick's; read and written under the queue's lock

        SlotWaiter(PickRequest request, byte[] body, boolean rewritten, long promptTokens, Predicate<Endpoint> eligible) {
            this.request = request;
            this.body = body;
            this.rewritten = rewritten;
            this.promptTokens = promptTokens;
            this.eligible = eligible;
        }

        @Override
        public PickResult repick() {
            EndpointPool.Candidates candidates = pool.candidates(eligible);
            stale = candidates.stale();
            return picker.pick(request, candidates.states());
        }

        @Override
        public void release(PickResult pick) {
            RouteDecision d = decision(pick, request, body, rewritten, promptTokens, stale);
            if (!d.refused()) {
                EndpointState first = d.ranked().getFirst();
                d = d.withReserved(new ReservedSend(first.endpoint(), sent(d, first)));
            }
            released.complete(d);
        }

        /** The same request over the same eligible endpoints (a subset hint is its own predicate) picks alike. */
        @Override
        public Object repickKey() {
            return new RepickKey(request, eligible);
        }

        RouteDecision await() {
            try {
                return released.get(slotWait.maxWaitNanos() + RELEASE_GRACE_NANOS, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                // No round has run for longer than the wait: the pool's ticker is stuck or stopped. Go out now.
                if (slotWait.remove(this)) {
                    release(repick());
                }
                return released.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                if (slotWait.remove(this)) {
                    return RouteDecision.refuse(OpenAiError.noEndpoint("the router is stopping"), request);
                }
                return released.join(); // released meanwhile: its send is recorded, and the face ends it
            } catch (ExecutionException e) {
                throw new IllegalStateException("a release never fails", e.getCause());
            }
        }
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
