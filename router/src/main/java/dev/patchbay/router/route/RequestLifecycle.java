package dev.patchbay.router.route;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.router.config.ModelRewriter;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.flow.FlowControl;
import dev.patchbay.router.flow.SlotWaitQueue;
import dev.patchbay.router.pick.Dispatch;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.PickResult;
import dev.patchbay.router.place.Placement;
import dev.patchbay.router.place.PlacementController;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.EndpointStatus;
import dev.patchbay.router.pool.Send;
import dev.patchbay.router.pool.ServedModels;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One request through the router, whichever face it came by: the HTTP proxy, the Envoy external processor and the
 * fleet simulator all drive it, and none routes on its own. Its stages:
 * <ol>
 *   <li><b>decide</b> ({@link #admit}): the body's model read and rewritten, checked against the catalog and the
 *       servers' model lists;</li>
 *   <li><b>flow control</b> ({@link FlowControl}, outside any profile): a sheddable request is refused while the pool
 *       is saturated; after the pick, an adapter request that no endpoint has a slot for waits in the router until a
 *       pick after some scrape round finds one ({@link SlotWaitQueue});</li>
 *   <li><b>post-pick</b>: the send is recorded against the endpoint picked and the profile's
 *       {@link dev.patchbay.router.pick.PreRequest} plugins are told of it;</li>
 *   <li><b>send</b>: the face sends where {@link RouteDecision#send()} says, moving the record if it sends elsewhere
 *       ({@link Send#movedTo});</li>
 *   <li><b>end</b>: the face reports the answer's first byte and its end on the send.</li>
 * </ol>
 * {@link #route} is the lifecycle as callbacks (the simulator's, on its virtual clock); {@link #decide} waits on the
 * caller's thread (both network faces run a request on a virtual thread).
 *
 * <p>A request is sheddable when it carries {@code x-patchbay-sheddable: true}, or an
 * {@code x-gateway-inference-objective} whose configured priority is negative (the gateway's meaning of sheddable).
 */
public final class RequestLifecycle {
    public static final String SHEDDABLE_HEADER = "x-patchbay-sheddable";
    public static final String OBJECTIVE_HEADER = "x-gateway-inference-objective";
    /** Larger request bodies are refused with 413 by every face: the router holds a whole body to read its model. */
    public static final int MAX_BODY_BYTES = 16 * 1024 * 1024;
    /**
     * Sent, {@code true}, with a request that may wait for a batch slot ({@link RouteDecision#requiresSlot}): a Patchbay
     * server then starts it only if its adapter can have a slot at once, and else answers 503 with {@link
     * #SLOT_REFUSED_HEADER}. Other servers ignore it. Behind Envoy the value is the number of endpoints named, and a
     * server asks for the slot only on Envoy's attempts before the last ({@code x-envoy-attempt-count}).
     */
    public static final String REQUIRE_SLOT_HEADER = "x-patchbay-require-slot";
    /** On a server's 503: it refused the request for want of a slot ({@link #REQUIRE_SLOT_HEADER}). */
    public static final String SLOT_REFUSED_HEADER = "x-patchbay-slot-refused";
    /** Every ready endpoint may be picked. */
    public static final Predicate<Endpoint> ANY_ENDPOINT = endpoint -> true;
    /** How long past its longest wait a request waits for a release that a stuck scrape round withholds. */
    private static final long RELEASE_GRACE_NANOS = 1_000_000_000L;

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * A request the router will route: what the picker is asked, the body to forward (the original, or re-serialised
     * after a model rewrite), and the prompt's estimated size ({@link PromptSize}; 0 without a body).
     */
    public record Admitted(PickRequest request, byte[] body, boolean rewritten, long promptTokens) {}

    private final EndpointPool pool;
    private final EndpointPicker picker;
    private final FlowControl flowControl;
    private final ModelRewriter rewriter;
    private final ModelCatalog catalog;
    private final Map<String, Integer> objectives;
    /** Where adapter requests wait for a slot; null without slot wait. */
    private final SlotWaitQueue slotWait;
    /** Requests a server refused for want of a slot, since the start. */
    private final LongAdder slotRefusals = new LongAdder();
    /** Told of every adapter request; its released copies get no requests. Null without placement. */
    private volatile PlacementController placement;

    /** The router's: its configuration's rewrites, catalog, objectives and flow control. */
    public RequestLifecycle(EndpointPool pool, EndpointPicker picker, RouterConfig config, ModelRewriter rewriter) {
        this(
                pool,
                picker,
                config.effectiveFlowControl(),
                rewriter,
                new ModelCatalog(config, rewriter),
                config.objectives());
    }

    /** Requests built as {@link Admitted} directly (the fleet simulator's), with {@code flowControl}. */
    public RequestLifecycle(EndpointPool pool, EndpointPicker picker, FlowControl flowControl) {
        this(
                pool,
                picker,
                flowControl,
                ModelRewriter.NONE,
                new ModelCatalog(RouterConfig.DEFAULT, ModelRewriter.NONE),
                Map.of());
    }

    private RequestLifecycle(
            EndpointPool pool,
            EndpointPicker picker,
            FlowControl flowControl,
            ModelRewriter rewriter,
            ModelCatalog catalog,
            Map<String, Integer> objectives) {
        this.pool = pool;
        this.picker = picker;
        this.flowControl = flowControl;
        this.rewriter = rewriter;
        this.catalog = catalog;
        this.objectives = objectives;
        if (flowControl.slotWaitNanos() > 0) {
            slotWait = new SlotWaitQueue(flowControl.slotWaitNanos(), pool.clock());
            // A slot a page one engine step old still shows free may be taken: hold the view that waits need.
            pool.countRequestsUntilShown();
            pool.afterEachRound(slotWait::releaseReady);
        } else {
            slotWait = null;
        }
    }

    public EndpointPicker picker() {
        return picker;
    }

    /**
     * Places adapters with {@code controller}: it is told of every adapter request and ticks after each scrape round,
     * and a copy it released gets no requests for its adapter. Called once, before requests come.
     */
    public void placeWith(PlacementController controller) {
        if (placement != null) throw new IllegalStateException("this lifecycle places adapters already");
        placement = controller;
        pool.afterEachRound(controller::onRound);
    }

    /** The placement routing reads now. */
    public Placement placement() {
        PlacementController controller = placement;
        return controller == null ? Placement.NONE : controller.placement();
    }

    public FlowControl flowControl() {
        return flowControl;
    }

    /**
     * The first stage for a completions or chat request: its model read, rewritten and checked. A refusal (400) comes
     * as a decision, else the admitted request.
     *
     * @param body   the request body (JSON with a {@code model})
     * @param header a request header by lower-case name
     */
    public Admission admit(byte[] body, Function<String, Optional<String>> header) {
        ObjectNode json;
        try {
            JsonNode parsed = JSON.readTree(body);
            if (!(parsed instanceof ObjectNode object)) {
                return Admission.refused(OpenAiError.badRequest("the request body must be a JSON object", null, null));
            }
            json = object;
        } catch (IOException e) {
            return Admission.refused(OpenAiError.badRequest("the request body is not valid JSON", null, null));
        }
        JsonNode modelNode = json.get("model");
        if (modelNode == null || !modelNode.isTextual() || modelNode.asText().isBlank()) {
            return Admission.refused(OpenAiError.badRequest("you must provide a model parameter", "model", null));
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
            return Admission.refused(
                    OpenAiError.badRequest("the model '" + model + "' does not exist", "model", "model_not_found"));
        }
        PickRequest request = new PickRequest(model, kind == ModelCatalog.Kind.BASE_MODEL, isSheddable(header));
        return new Admission(
                null,
                new Admitted(request, forwarded, forwarded != body, PromptSize.estimateTokens(json)),
                catalog.servedBy(model, lists));
    }

    /**
     * The first stage's outcome: a refusal, or the request and the endpoints that serve its model (every endpoint
     * when the model lists say nothing).
     */
    public record Admission(OpenAiError refusal, Admitted admitted, Predicate<Endpoint> servedBy) {
        static Admission refused(OpenAiError error) {
            return new Admission(error, null, ANY_ENDPOINT);
        }
    }

    /** Decides for a completions request, waiting here when it waits for a slot. */
    public RouteDecision decide(byte[] body, Function<String, Optional<String>> header) {
        return decide(body, header, ANY_ENDPOINT);
    }

    /**
     * Decides among the endpoints {@code eligible} accepts only (the Endpoint Picker Protocol's subset hint): none
     * of them ready is a 503.
     */
    public RouteDecision decide(byte[] body, Function<String, Optional<String>> header, Predicate<Endpoint> eligible) {
        Admission admission = admit(body, header);
        if (admission.refusal() != null) {
            return RouteDecision.refuse(admission.refusal(), null);
        }
        return await(admission.admitted(), both(eligible, admission.servedBy()));
    }

    /** Decides for a request without a model (the model list): any ready endpoint will do. */
    public RouteDecision decideWithoutModel() {
        return decideWithoutModel(ANY_ENDPOINT);
    }

    public RouteDecision decideWithoutModel(Predicate<Endpoint> eligible) {
        return await(new Admitted(new PickRequest("", true, false), null, false, 0), eligible);
    }

    /**
     * The stages after admission, as callbacks: {@code onDecided} is called exactly once, with a refusal or with the
     * send recorded, at once or, for a request that waits for a slot, after the scrape round whose pick releases it
     * (on the thread that runs the round, before the next held request's pick).
     */
    public void route(Admitted admitted, Predicate<Endpoint> eligible, Consumer<RouteDecision> onDecided) {
        start(admitted, eligible, onDecided);
    }

    /** Starts a request; the waiter when it waits for a slot, else null (decided already). */
    private Waiter start(Admitted admitted, Predicate<Endpoint> eligible, Consumer<RouteDecision> onDecided) {
        PickRequest request = admitted.request();
        PlacementController controller = placement;
        if (controller != null && !request.baseModel()) controller.arrived(request.model());
        EndpointPool.Candidates candidates = candidates(request, eligible);
        if (request.sheddable() && flowControl.saturation().isSaturated(candidates.states())) {
            onDecided.accept(RouteDecision.refuse(OpenAiError.shed(), request));
            return null;
        }
        PickResult pick = picker.pick(request, candidates.states());
        long deadline = slotWait == null ? 0 : pool.clock().getAsLong() + slotWait.maxWaitNanos();
        if (slotWait != null) {
            Waiter waiter = new Waiter(admitted, eligible, onDecided, candidates, deadline);
            if (slotWait.hold(request, pick, waiter)) {
                return waiter;
            }
        }
        dispatch(admitted, eligible, candidates, pick, onDecided, deadline);
        return null;
    }

    /**
     * A server refused {@code refused}'s send for want of a batch slot ({@link #SLOT_REFUSED_HEADER}: a slot its page
     * showed free was taken, by another router's request most likely): its send ended, the request waits for a slot
     * again until the end of its first wait, picked anew after every scrape round. {@code onDecided} gets the new
     * decision, as {@link #route}'s does.
     */
    public void slotRefused(RouteDecision refused, Consumer<RouteDecision> onDecided) {
        retry(refused, onDecided);
    }

    /** {@link #slotRefused}, waited for on the caller's thread. */
    public RouteDecision awaitSlotAgain(RouteDecision refused) {
        CompletableFuture<RouteDecision> decided = new CompletableFuture<>();
        Waiter held = retry(refused, decided::complete);
        return held == null ? decided.join() : awaitRelease(held, decided, refused.request());
    }

    private Waiter retry(RouteDecision refused, Consumer<RouteDecision> onDecided) {
        RouteDecision.SlotRetry retry = refused.slotRetry();
        if (retry == null || slotWait == null) {
            throw new IllegalArgumentException("the decision did not ask for a slot");
        }
        slotRefusals.increment();
        Admitted admitted = retry.admitted();
        EndpointPool.Candidates candidates = candidates(admitted.request(), retry.eligible());
        Waiter waiter = new Waiter(admitted, retry.eligible(), onDecided, candidates, retry.deadlineNanos());
        if (slotWait.holdAgain(admitted.request(), waiter, retry.deadlineNanos())) {
            return waiter;
        }
        PickResult pick = picker.pick(admitted.request(), candidates.states());
        dispatch(admitted, retry.eligible(), candidates, pick, onDecided, retry.deadlineNanos());
        return null;
    }

    /** The pick stands: the send recorded against its first endpoint, the profile's hooks told, the face told. */
    private void dispatch(
            Admitted admitted,
            Predicate<Endpoint> eligible,
            EndpointPool.Candidates candidates,
            PickResult pick,
            Consumer<RouteDecision> onDecided,
            long deadlineNanos) {
        PickRequest request = admitted.request();
        if (pick.outcome() == PickResult.Outcome.NO_ENDPOINT) {
            onDecided.accept(RouteDecision.refuse(OpenAiError.noEndpoint("no model server is ready"), request));
            return;
        }
        EndpointState target = pick.best();
        Send send = pool.sent(target.endpoint(), request.baseModel() ? null : request.model(), admitted.promptTokens());
        PlacementController controller = placement;
        if (controller != null && !request.baseModel()) controller.sent(request.model(), target.endpoint());
        picker.preRequest(new Dispatched(request, candidates.states(), target, send));
        onDecided.accept(new RouteDecision(
                null,
                request,
                admitted.body(),
                admitted.rewritten(),
                pick.ranked(),
                admitted.promptTokens(),
                candidates.stale(),
                send,
                slotWait != null && !request.baseModel() && pool.clock().getAsLong() < deadlineNanos
                        ? new RouteDecision.SlotRetry(admitted, eligible, deadlineNanos)
                        : null));
    }

    private record Dispatched(PickRequest request, List<EndpointState> candidates, EndpointState target, Send send)
            implements Dispatch {
        @Override
        public void countUntilShown() {
            send.countUntilShown();
        }
    }

    /**
     * The pool's candidates among {@code eligible}, less the copies placement released for the request's adapter
     * (unless that would leave none: a request is never refused for placement's sake).
     */
    private EndpointPool.Candidates candidates(PickRequest request, Predicate<Endpoint> eligible) {
        EndpointPool.Candidates all = pool.candidates(eligible);
        if (request.baseModel() || placement == null) return all;
        Placement now = placement.placement();
        if (now.released().isEmpty()) return all;
        String adapter = request.model();
        List<EndpointState> kept = all.states().stream()
                .filter(s -> !now.isReleased(adapter, s.endpoint()))
                .toList();
        return kept.isEmpty() || kept.size() == all.states().size()
                ? all
                : new EndpointPool.Candidates(kept, all.stale());
    }

    /** {@link #route}, waited for on the caller's thread. */
    private RouteDecision await(Admitted admitted, Predicate<Endpoint> eligible) {
        CompletableFuture<RouteDecision> decided = new CompletableFuture<>();
        Waiter held = start(admitted, eligible, decided::complete);
        return held == null ? decided.join() : awaitRelease(held, decided, admitted.request());
    }

    private RouteDecision awaitRelease(Waiter held, CompletableFuture<RouteDecision> decided, PickRequest request) {
        try {
            return decided.get(slotWait.maxWaitNanos() + RELEASE_GRACE_NANOS, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            // No round has run for longer than the wait: the pool's ticker is stuck or stopped. Go out now.
            if (slotWait.remove(held)) {
                held.release(held.repick());
            }
            return decided.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (slotWait.remove(held)) {
                return RouteDecision.refuse(OpenAiError.noEndpoint("the router is stopping"), request);
            }
            return decided.join(); // released meanwhile: its send is recorded, and the face ends it
        } catch (ExecutionException e) {
            throw new IllegalStateException("a release never fails", e.getCause());
        }
    }

    /**
     * What the pool knows of {@code endpoint} now, ready or not, once a scrape of it has succeeded: for bookkeeping
     * against an endpoint the router did not rank first (one a data plane's retry or its own fallback served).
     */
    public Optional<EndpointState> stateOf(Endpoint endpoint) {
        for (EndpointStatus status : pool.statuses()) {
            if (status.endpoint().equals(endpoint) && status.metrics() != null) {
                return Optional.of(new EndpointState(endpoint, status.metrics(), pool.promptBacklog(endpoint)));
            }
        }
        return Optional.empty();
    }

    /** Requests waiting for a slot now: the router's own gauge. */
    public int waitingForSlot() {
        return slotWait == null ? 0 : slotWait.size();
    }

    /** Requests a server refused for want of a batch slot ({@link #slotRefused}), since the start. */
    public long slotRefusals() {
        return slotRefusals.sum();
    }

    /** Requests that have waited for a slot, since the start. */
    public long waitedForSlot() {
        return slotWait == null ? 0 : slotWait.heldTotal();
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

    private record RepickKey(PickRequest request, Predicate<Endpoint> eligible) {}

    /** One request waiting in {@link #slotWait}. */
    private final class Waiter implements SlotWaitQueue.Waiter {
        private final Admitted admitted;
        private final Predicate<Endpoint> eligible;
        private final Consumer<RouteDecision> onDecided;
        private final long deadlineNanos;
        private EndpointPool.Candidates candidates; // the last pick's; read and written under the queue's lock

        Waiter(
                Admitted admitted,
                Predicate<Endpoint> eligible,
                Consumer<RouteDecision> onDecided,
                EndpointPool.Candidates candidates,
                long deadlineNanos) {
            this.admitted = admitted;
            this.eligible = eligible;
            this.onDecided = onDecided;
            this.candidates = candidates;
            this.deadlineNanos = deadlineNanos;
        }

        @Override
        public PickResult repick() {
            candidates = candidates(admitted.request(), eligible);
            return picker.pick(admitted.request(), candidates.states());
        }

        @Override
        public void release(PickResult pick) {
            dispatch(admitted, eligible, candidates, pick, onDecided, deadlineNanos);
        }

        /** The same request over the same eligible endpoints (a subset hint is its own predicate) picks alike. */
        @Override
        public Object repickKey() {
            return new RepickKey(admitted.request(), eligible);
        }
    }

    private boolean isSheddable(Function<String, Optional<String>> header) {
        if (header.apply(SHEDDABLE_HEADER)
                .map(v -> v.trim().equalsIgnoreCase("true"))
                .orElse(false)) {
            return true;
        }
        return header.apply(OBJECTIVE_HEADER)
                .map(objective -> objectives.getOrDefault(objective.trim(), 0) < 0)
                .orElse(false);
    }
}
