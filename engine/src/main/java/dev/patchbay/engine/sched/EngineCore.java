package dev.patchbay.engine.sched;

import dev.patchbay.engine.ContextLimit;
import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.EngineRequest;
import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.ModelTarget;
import dev.patchbay.engine.RequestOutput;
import dev.patchbay.engine.RequestRejectedException;
import dev.patchbay.engine.RequestRejectedException.Reason;
import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.AdapterRegistry;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.clock.Clock;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.ScheduledSequence;
import dev.patchbay.engine.exec.StepResult;
import dev.patchbay.engine.exec.TokenLogprobs;
import dev.patchbay.engine.kv.KvCacheManager;
import dev.patchbay.engine.model.Model;
import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.EngineStats;
import dev.patchbay.engine.stats.FinishedRequest;
import dev.patchbay.engine.stats.StepStats;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The engine: a scheduler, a KV cache manager, an adapter registry and an executor, advanced one step at a time.
 * Any thread may submit, abort, load and unload; those calls only enqueue commands. Exactly one thread
 * (the engine loop, or a simulator's driver) calls {@link #beginStep} and {@link #finishStep}, which
 * apply the commands, run the scheduler and executor, deliver outputs and publish a snapshot.
 */
public final class EngineCore {
    private final EngineConfig config;
    private final Model model;
    private final Clock clock;
    private final KvCacheManager kv;
    private final AdapterRegistry adapters;
    private final Scheduler scheduler;
    private final Snapshots snapshots;
    /** Every cumulative counter of the engine; the scheduler, the KV cache and the adapter registry report into it. */
    private final EngineStats stats = new EngineStats();

    private final ContextLimit contextLimit;

    private final ConcurrentLinkedQueue<Runnable> inbox = new ConcurrentLinkedQueue<>();
    private final Map<Long, Request> active = new HashMap<>();
    private final AtomicLong nextRequestId = new AtomicLong(1);
    /** Requests submitted and not yet taken from the inbox. */
    private final AtomicInteger inboxRequests = new AtomicInteger();
    /** Held while a conditional submit checks for a slot and takes it. */
    private final Object slotClaims = new Object();
    /** Submitted requests no published snapshot shows yet: {@link #snapshot} counts them as waiting. */
    private final UnshownArrivals unshown = new UnshownArrivals();
    /** Engine thread: the requests taken from the inbox since the last snapshot, which the next one shows. */
    private final List<Request> acceptedSinceSnapshot = new ArrayList<>();
    /** The waiting queue's length as of the last step, for admission control from other threads. */
    private volatile int waitingCount;

    private final CopyOnWriteArrayList<Consumer<EngineSnapshot>> listeners = new CopyOnWriteArrayList<>();
    private final CopyOnWriteArrayList<Consumer<Scheduler.Plan>> planListeners = new CopyOnWriteArrayList<>();
    private final Runnable wakeup;
    private volatile boolean accepting = true;

    // Step-local event buffers, reset by each snapshot.
    private List<AdapterLoad> loads = new ArrayList<>();
    private List<FinishedRequest> finished = new ArrayList<>();
    private boolean dirty = true;

    /** A step that has been scheduled and executed, whose outputs land at {@code startNanos + modeledNanos}. */
    public record PendingStep(
            Scheduler.Plan plan,
            Batch batch,
            StepResult result,
            long startNanos,
            long modeledNanos,
            Throwable failure) {}

    public EngineCore(EngineConfig config, Model model, Clock clock, ExecutorService loaderPool, Runnable wakeup) {
        this.config = config;
        this.model = model;
        this.clock = clock;
        this.wakeup = wakeup;
        // A request longer than the whole KV cache could never run: it would be preempted and recomputed for ever.
        // vLLM refuses to start with such a cache; a cache set smaller by hand here shortens the context instead.
        this.contextLimit = new ContextLimit(
                (int) Math.min(config.maxModelLen(), (long) config.numKvBlocks() * config.blockSize()));
        var held = model.executor().kvCacheBlocks();
        if (held.isPresent() && held.getAsInt() != config.numKvBlocks()) {
            // Block ids beyond what the executor holds would fail the first step that hands them out.
            throw new IllegalArgumentException("the engine is configured with " + config.numKvBlocks()
                    + " KV blocks but the executor holds " + held.getAsInt());
        }
        this.kv = new KvCacheManager(config.numKvBlocks(), config.blockSize(), config.enablePrefixCaching(), stats);
        this.adapters = new AdapterRegistry(
                config, model.config(), model.executor(), loaderPool, clock, stats, this::onEngineThread, this::wake);
        this.scheduler = new Scheduler(config, kv, adapters, stats);
        this.snapshots = new Snapshots(config, model, clock);
        publish(StepStats.EMPTY);
    }

    public EngineConfig config() {
        return config;
    }

    public Model model() {
        return model;
    }

    public Clock clock() {
        return clock;
    }

    private void wake() {
        wakeup.run();
    }

    private void onEngineThread(Runnable command) {
        inbox.add(command);
        wake();
    }

    // ---------------------------------------------------------------- API (any thread)

    /** Accepts a request and returns its id, or refuses it at once. */
    public long submit(EngineRequest req) throws RequestRejectedException {
        if (!accepting) throw new RequestRejectedException(Reason.SHUTTING_DOWN, "The server is shutting down");
        int len = req.promptTokens().length;
        if (len == 0) throw new RequestRejectedException(Reason.INVALID, "The prompt is empty");
        // At least one token must fit after the prompt; callers that know max_tokens checked it the same way.
        contextLimit.maxTokens(len, 1);
        checkLogprobs(req.params().logprobs(), "logprobs");
        checkLogprobs(req.params().promptLogprobs(), "prompt_logprobs");
        RegisteredAdapter adapter = null;
        if (req.adapterName() != null) {
            adapter = adapters.servable(req.adapterName());
            if (adapter == null) {
                throw new RequestRejectedException(
                        Reason.UNKNOWN_ADAPTER, ModelTarget.unknownModelMessage(req.adapterName()));
            }
        }
        if (inboxRequests.incrementAndGet() + waitingCount > config.maxWaitingRequests()) {
            inboxRequests.decrementAndGet();
            throw new RequestRejectedException(
                    Reason.QUEUE_FULL,
                    "The server's waiting queue is full (" + config.maxWaitingRequests()
                            + " requests); try again later");
        }
        long id = nextRequestId.getAndIncrement();
        long seed = req.params().seed() != null ? req.params().seed() : config.seed() * 0x9E3779B97F4A7C15L + id;
        Request r = new Request(
                id,
                req.promptTokens().clone(),
                adapter,
                req.params(),
                req.listener(),
                new SplittableRandom(seed),
                req.arrivalNanos());
        if (req.listener().wantsText() || !req.params().stop().isEmpty()) {
            r.text = new OutputText(model.tokenizer(), req.params().stop());
        }
        unshown.arrived(adapter, len);
        inbox.add(() -> accept(r));
        wake();
        return id;
    }

    /**
     * {@link #submit}, but only when the request's adapter can have a batch slot at once ({@link
     * dev.patchbay.engine.stats.LoraState#hasSlotFor}), as of the snapshot with every request submitted so far: else
     * it is refused with {@link Reason#NO_SLOT}. A router that took a slot its stale page showed free learns so at once
     * and holds the request until some server has one, instead of leaving it queued here. Conditional submits are
     * checked and submitted one at a time, so two of them never take the same slot.
     */
    public long submitIfSlot(EngineRequest req) throws RequestRejectedException {
        if (req.adapterName() == null || adapters.servable(req.adapterName()) == null) return submit(req);
        synchronized (slotClaims) {
            EngineSnapshot s = snapshot();
            if (s.lora() != null && !s.lora().hasSlotFor(req.adapterName())) {
                throw new RequestRejectedException(
                        Reason.NO_SLOT,
                        "No batch slot can be had for LoRA adapter '" + req.adapterName()
                                + "' now: every slot is held by adapters with requests in flight or claimed by "
                                + "adapters waiting for one");
            }
            return submit(req);
        }
    }

    private void checkLogprobs(Integer n, String what) throws RequestRejectedException {
        if (n != null && !config.allowsLogprobs(n)) {
            throw new RequestRejectedException(
                    Reason.INVALID,
                    "Requested " + what + " of " + n + ", which is greater than max allowed: " + config.maxLogprobs());
        }
    }

    /** Ends a request in whatever state it is; its listener gets a final output with reason abort. */
    public void abort(long requestId) {
        inbox.add(() -> {
            Request r = active.get(requestId);
            if (r != null) finish(r, FinishReason.ABORT, null);
        });
        wake();
    }

    /**
     * Registers an adapter; the future completes when it is resident in host memory (see
     * {@link AdapterRegistry#register}).
     */
    public CompletableFuture<RegisteredAdapter> loadAdapter(String name, Path path, boolean pinned, boolean loadNow)
            throws AdapterException {
        return adapters.register(name, path, pinned, loadNow);
    }

    /** Brings a registered adapter into host memory ahead of demand; see {@link AdapterRegistry#preload}. */
    public CompletableFuture<RegisteredAdapter> preloadAdapter(String name) throws AdapterException {
        return adapters.preload(name);
    }

    /**
     * Unloads an adapter: new requests for it are refused at once; requests in flight finish; then it leaves
     * both tiers and the future completes.
     */
    public CompletableFuture<Void> unloadAdapter(String name) throws AdapterException {
        return adapters.unload(name);
    }

    /** The adapter registered under {@code name} that requests may name, or null. */
    public RegisteredAdapter adapter(String name) {
        return adapters.servable(name);
    }

    /** What a request's model name refers to; the one place names are resolved. */
    public ModelTarget resolve(String model) {
        if (model.equals(config.servedModelName())) return ModelTarget.BASE_MODEL;
        return adapters.servable(model) != null ? ModelTarget.ADAPTER : ModelTarget.UNKNOWN;
    }

    /** The context-length rule of this engine's {@code max_model_len}. */
    public ContextLimit contextLimit() {
        return contextLimit;
    }

    /** Adapters that requests may name, in registration order. */
    public List<RegisteredAdapter> adapters() {
        return adapters.list();
    }

    /** Every adapter's lifecycle, counts and residency, and the resolver directory. */
    public AdapterRegistry adapterRegistry() {
        return adapters;
    }

    /** Requests ever accepted by {@link #submit}. */
    public long acceptedRequests() {
        return nextRequestId.get() - 1;
    }

    /**
     * The engine as of its last step, with the requests submitted since then counted as waiting: a page rendered from
     * it shows a request as soon as the server has it. Listeners get the snapshots as published.
     */
    public EngineSnapshot snapshot() {
        return snapshots.withUnshown(snapshots.latest(), unshown);
    }

    /** Called on the engine thread with every snapshot, in order. */
    public void addListener(Consumer<EngineSnapshot> listener) {
        listeners.add(listener);
    }

    /** Called on the engine thread with every step's plan, empty or not, before it executes. */
    public void addPlanListener(Consumer<Scheduler.Plan> listener) {
        planListeners.add(listener);
    }

    public void stopAccepting() {
        accepting = false;
    }

    public boolean accepting() {
        return accepting;
    }

    // ---------------------------------------------------------------- the step (engine thread only)

    /** Whether requests are queued or running (loads alone do not count). */
    public boolean hasRequests() {
        return !scheduler.running.isEmpty()
                || !scheduler.waiting.isEmpty()
                || !active.isEmpty()
                || inboxRequests.get() > 0;
    }

    /** The earliest time something will become ready by itself (an adapter load), or Long.MAX_VALUE. */
    public long nextTimedEventNanos() {
        return adapters.nextLoadReadyNanos();
    }

    /**
     * Applies commands, admits finished loads, schedules and executes one batch. Returns null when there was
     * nothing to run (a snapshot is still published if the state changed).
     */
    public PendingStep beginStep() {
        long now = clock.nanos();
        Runnable cmd;
        while ((cmd = inbox.poll()) != null) cmd.run();
        adapters.startWantedLoads();
        adapters.admitFinishedLoads(loads, this::failAdapterRequests);
        adapters.settlePreloads();
        if (adapters.completeUnloads()) dirty = true;

        int deferred = scheduler.numDeferred();
        Scheduler.Plan plan = scheduler.schedule(now, loads);
        for (Consumer<Scheduler.Plan> l : planListeners) l.accept(plan);
        if (plan.isEmpty()) {
            boolean changed = dirty || scheduler.numDeferred() != deferred;
            if (changed || adapters.takeChanged() || !loads.isEmpty() || !finished.isEmpty()) {
                publish(new StepStats(false, 0, -1, List.of(), List.of(), takeFinished(), takeLoads()));
            }
            return null;
        }
        Batch batch = buildBatch(plan);
        StepResult result = null;
        Throwable failure = null;
        try {
            result = model.executor().execute(batch);
        } catch (RuntimeException | LinkageError | AssertionError e) {
            // The batch's requests end with an error; the engine keeps serving the next ones.
            failure = e;
        }
        long modeled = plan.activationNanos() + (result == null ? 0 : result.modeledNanos());
        return new PendingStep(plan, batch, result, now, modeled, failure);
    }

    /** Applies a step's tokens at engine time {@code endNanos}: outputs, stops, finishes, then a snapshot. */
    public void finishStep(PendingStep step, long endNanos) {
        List<StepStats.FirstToken> firstTokens = new ArrayList<>();
        List<Double> itl = new ArrayList<>();
        int scheduledTokens = 0;
        List<Scheduler.Scheduled> items = step.plan().scheduled();
        for (int i = 0; i < items.size(); i++) {
            Scheduler.Scheduled s = items.get(i);
            Request r = s.request();
            scheduledTokens += s.numTokens();
            if (r.status != Request.Status.RUNNING) continue; // aborted meanwhile (cannot happen on the loop thread)
            if (step.failure() != null) {
                finish(r, FinishReason.ERROR, "The model failed: " + step.failure());
                continue;
            }
            r.recordPromptLogprobs(
                    step.batch().sequences().get(i).startPosition(),
                    step.result().promptLogprobs(i));
            r.numComputed += s.numTokens();
            kv.cacheFullBlocks(r.blocks, r.numComputed);
            if (r.numComputed < r.numTokens()) continue; // a prompt chunk: no token yet
            int token = step.result().nextTokens()[i];
            if (r.firstTokenNanos < 0) {
                r.firstTokenNanos = endNanos;
                firstTokens.add(new StepStats.FirstToken(adapterName(r), (endNanos - r.arrivalNanos) / 1e9));
                stats.promptProcessed(r.adapter, r.prompt.length);
            } else {
                itl.add((endNanos - r.lastTokenNanos) / 1e9);
            }
            r.lastTokenNanos = endNanos;
            r.appendOutput(token, step.result().sampleLogprobs(i));
            stats.tokenGenerated(r.adapter);
            FinishReason reason = stopReason(r, token);
            if (reason != null) {
                finish(r, reason, null);
            } else {
                emit(r, null, null);
            }
        }
        int numAdapters = config.enableLora() ? step.plan().adapters().size() : -1;
        publish(new StepStats(true, scheduledTokens, numAdapters, firstTokens, itl, takeFinished(), takeLoads()));
    }

    /** Convenience for one engine on its own clock: begin, wait the modeled time, finish. */
    public boolean runStep() throws InterruptedException {
        PendingStep step = beginStep();
        if (step == null) return false;
        if (step.modeledNanos() > 0) clock.sleepUntil(step.startNanos() + step.modeledNanos());
        finishStep(step, clock.nanos());
        return true;
    }

    private FinishReason stopReason(Request r, int token) {
        boolean stopString = r.text != null && r.text.append(token);
        if (stopString) return FinishReason.STOP;
        if (!r.params.ignoreEos() && token == model.tokenizer().eosTokenId()) return FinishReason.STOP;
        if (r.params.stopTokenIds().contains(token)) return FinishReason.STOP;
        if (r.numOutput >= r.params.maxTokens() || r.numTokens() >= contextLimit.maxModelLen())
            return FinishReason.LENGTH;
        return null;
    }

    private void accept(Request r) {
        inboxRequests.decrementAndGet();
        acceptedSinceSnapshot.add(r);
        active.put(r.id, r);
        r.queuedNanos = clock.nanos();
        scheduler.enqueue(r);
        dirty = true;
    }

    private void finish(Request r, FinishReason reason, String error) {
        if (r.status == Request.Status.FINISHED) return;
        scheduler.remove(r);
        r.status = Request.Status.FINISHED;
        r.finishReason = reason;
        r.error = error;
        active.remove(r.id);
        stats.requestFinished(r.adapter, reason);
        finished.add(timings(r, reason));
        dirty = true;
        emit(r, reason, error);
    }

    private void emit(Request r, FinishReason reason, String error) {
        int[] fresh = Arrays.copyOfRange(r.output, r.numEmitted, r.numOutput);
        r.numEmitted = r.numOutput;
        String delta = r.text == null ? "" : r.text.takeDelta(reason != null);
        List<TokenLogprobs> logprobs = r.outputLogprobs == null
                ? null
                : Collections.unmodifiableList(
                        Arrays.asList(Arrays.copyOfRange(r.outputLogprobs, r.numEmitted - fresh.length, r.numEmitted)));
        List<TokenLogprobs> promptLogprobs = null;
        if (r.promptLogprobs != null && !r.promptLogprobsSent) {
            r.promptLogprobsSent = true;
            promptLogprobs = Collections.unmodifiableList(Arrays.asList(r.promptLogprobs.clone()));
        }
        try {
            r.listener.onOutput(new RequestOutput(
                    r.id, fresh, delta, reason, r.prompt.length, r.numOutput, error, logprobs, promptLogprobs));
        } catch (RuntimeException e) {
            // A listener's fault must not stop the engine; the request itself is aborted if still running.
            if (reason == null) inbox.add(() -> finish(r, FinishReason.ABORT, null));
        }
    }

    private FinishedRequest timings(Request r, FinishReason reason) {
        long end = r.lastTokenNanos >= 0 ? r.lastTokenNanos : clock.nanos();
        double nan = Double.NaN;
        double queue = r.firstScheduledNanos >= 0 ? (r.firstScheduledNanos - r.queuedNanos) / 1e9 : nan;
        double prefill = r.firstTokenNanos >= 0 ? (r.firstTokenNanos - r.firstScheduledNanos) / 1e9 : nan;
        double decode = r.firstTokenNanos >= 0 ? (r.lastTokenNanos - r.firstTokenNanos) / 1e9 : nan;
        double inference = r.firstTokenNanos >= 0 ? (r.lastTokenNanos - r.firstScheduledNanos) / 1e9 : nan;
        double tpot = r.numOutput > 1 ? decode / (r.numOutput - 1) : nan;
        return new FinishedRequest(
                adapterName(r),
                reason,
                r.prompt.length,
                r.numOutput,
                r.params.maxTokens(),
                r.params.n(),
                (Math.max(end, clock.nanos()) - r.arrivalNanos) / 1e9,
                queue,
                prefill,
                decode,
                inference,
                tpot);
    }

    private static String adapterName(Request r) {
        return r.adapter == null ? null : r.adapter.name();
    }

    private void failAdapterRequests(RegisteredAdapter a, Throwable cause) {
        List<Request> victims = new ArrayList<>();
        for (Request r : scheduler.waiting) if (r.adapter == a) victims.add(r);
        for (Request r : victims)
            finish(r, FinishReason.ERROR, "Adapter '" + a.name() + "' failed to load: " + cause.getMessage());
    }

    private Batch buildBatch(Scheduler.Plan plan) {
        List<ScheduledSequence> seqs = new ArrayList<>(plan.scheduled().size());
        int tokens = 0, prefill = 0, decodes = 0;
        for (Scheduler.Scheduled s : plan.scheduled()) {
            Request r = s.request();
            int n = s.numTokens();
            boolean sample = r.numComputed + n >= r.numTokens();
            boolean decode = n == 1 && r.numOutput > 0 && r.numComputed == r.numTokens() - 1;
            if (decode) decodes++;
            else prefill += n;
            tokens += n;
            seqs.add(new ScheduledSequence(
                    r.id,
                    r.tokensRange(r.numComputed, n),
                    r.numComputed,
                    r.blocks.table(),
                    r.adapter == null ? -1 : r.adapter.slot(),
                    sample,
                    r.params,
                    r.rng,
                    r.prompt,
                    r.numOutput));
        }
        return new Batch(seqs, tokens, prefill, decodes, plan.adapters().size(), config.blockSize());
    }

    private List<FinishedRequest> takeFinished() {
        if (finished.isEmpty()) return List.of();
        List<FinishedRequest> f = finished;
        finished = new ArrayList<>();
        return f;
    }

    private List<AdapterLoad> takeLoads() {
        if (loads.isEmpty()) return List.of();
        List<AdapterLoad> l = loads;
        loads = new ArrayList<>();
        return l;
    }

    private void publish(StepStats step) {
        dirty = false;
        waitingCount = scheduler.waiting.size();
        // Before the snapshot that shows them: a reader then may miss a request for a moment, never count it twice.
        for (Request r : acceptedSinceSnapshot) unshown.shown(r.adapter(), r.prompt.length);
        acceptedSinceSnapshot.clear();
        EngineSnapshot s = snapshots.publish(scheduler, kv, adapters, stats, step);
        for (Consumer<EngineSnapshot> l : listeners) l.accept(s);
    }

    /** Engine-thread view: ids of the waiting queue, head first. */
    public List<Long> waitingIds() {
        List<Long> ids = new ArrayList<>();
        for (Request r : scheduler.waiting) ids.add(r.id());
        return ids;
    }

    /** Engine-thread view: ids of the running set, oldest first. */
    public List<Long> runningIds() {
        List<Long> ids = new ArrayList<>();
        for (Request r : scheduler.running) ids.add(r.id());
        return ids;
    }

    /** Engine-thread view for invariant checks in tests. */
    public Collection<Request> activeRequests() {
        return active.values();
    }

    public int freeKvBlocks() {
        return kv.numFree();
    }

    Scheduler scheduler() {
        return scheduler;
    }

    KvCacheManager kvCache() {
        return kv;
    }
}
