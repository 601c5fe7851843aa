package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import dev.patchbay.router.scrape.LoraPlacement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Spreads a hot adapter over one more endpoint when every endpoint holding it in a batch slot has a long waiting
 * queue, or twice the requests of some other endpoint, and no endpoint has a slot to give it. A server frees a slot
 * only when no request of its adapter is left, and a busy adapter always has one, so once every slot in the pool is
 * busy the placement freezes: a hot adapter that landed on one endpoint stays there however long its queue grows,
 * while other endpoints sit half idle.
 *
 * <p>This filter breaks the freeze deliberately. Among the endpoints with much shorter queues it picks the one whose
 * slot frees soonest: a slot adapter held elsewhere too (its traffic has somewhere to go) with the fewest requests
 * there. It stops sending that adapter to that endpoint: a drain. When the adapter's last request there ends, its
 * slot is idle and the hot adapter's next request is sent there (this filter keeps only that endpoint for it);
 * until then no adapter that would need a slot there is sent there either. The drain ends when the hot adapter
 * is in the slot, when another adapter took it, or after a timeout. One drain per endpoint and per hot adapter at
 * a time, and none on an endpoint whose last drain ended less than a cooldown ago, so placement moves a slot at a
 * time instead of thrashing.
 *
 * <p>The same drain rescues an adapter that lost its last slot while every slot was busy (its requests, queued
 * where it has no slot, would wait until some adapter there has no request left, under steady traffic never): the
 * drain is then on an endpoint where its requests wait.
 *
 * <p>For every request it removes the endpoints where that request would hinder a drain, unless none is left. Its
 * picks change nothing: drains start and end as requests are sent ({@link #preRequest}). Thread-safe: drains live in
 * a concurrent map; two racing sends may each start one, which is harmless.
 */
public final class LoraSpreadFilter implements Filter, PreRequest {
    public static final String NAME = "lora-spread";
    /** Holders count as overloaded when their waiting queues are this much longer than the drain target's. */
    public static final int DEFAULT_OVERLOAD_WAITING = 8;
    /**
     * Or when each holder has at least this many times the drain target's requests (running and waiting), and at
     * least {@link #MIN_OVERLOAD_REQUESTS}. Near saturation a server's queue stays empty until its running batch is
     * full, so queues show an overloaded placement only once it is too late; running counts show it earlier
     * (docs/lab/2026-12-02-patchbay-profile-tuning.md).
     */
    public static final double OVERLOAD_REQUESTS_RATIO = 2.0;
    /**
     * Below this many requests on a holder the request-count trigger stays off: at light load a twofold difference is
     * a few requests and not worth a load (more let a placement crisis run longer: the lab note above).
     */
    public static final int MIN_OVERLOAD_REQUESTS = 32;
    /**
     * A drain target must have at most this many requests waiting. Past the fleet's capacity every queue is long and
     * some are always twice others; a drain there idles a slot for tens of seconds and frees no capacity
     * (docs/lab/2026-12-03-placement-design.md).
     */
    public static final int MAX_TARGET_WAITING = 32;

    public static final long DEFAULT_TIMEOUT_NANOS = 60_000_000_000L;
    /**
     * A drain starts once it has been wanted for this long: a burst makes queues uneven for a moment and passes by
     * itself, a frozen placement does not; much longer and a real freeze waits too long
     * (docs/lab/2026-12-03-placement-design.md).
     */
    public static final long DEFAULT_PERSISTENCE_NANOS = 2_000_000_000L;

    public static final long DEFAULT_COOLDOWN_NANOS = 30_000_000_000L;

    /** {@code adapter} is being drained from an endpoint to make room for {@code forAdapter}. */
    record Drain(String adapter, String forAdapter, long sinceNanos) {}

    /** A slot adapter that could be drained, and how soon its slot would free. */
    private record Victim(String adapter, boolean heldElsewhere, int requests) {
        /** Ties go to the smaller name: the order of a scraped map is no order, and picks must be reproducible. */
        boolean betterThan(Victim other) {
            if (heldElsewhere != other.heldElsewhere) {
                return heldElsewhere;
            }
            if (requests != other.requests) {
                return requests < other.requests;
            }
            return adapter.compareTo(other.adapter) < 0;
        }
    }

    private final Map<Endpoint, Drain> drains = new ConcurrentHashMap<>();
    /** Since when each adapter has wanted a drain, at every pick for it: a drain starts only once that persists. */
    private final Map<String, Long> overloadedSince = new ConcurrentHashMap<>();
    /** When each endpoint's last drain ended: two adapters must not swap a slot back and forth. */
    private final Map<Endpoint, Long> drainEnded = new ConcurrentHashMap<>();

    private final AtomicLong drainsStarted = new AtomicLong();
    private final LongSupplier nanoClock;
    private final int overloadWaiting;
    private final long timeoutNanos;
    private final long cooldownNanos;
    private final long persistenceNanos;

    /**
     * The filter's parameters.
     *
     * @param overloadWaiting  how much longer the holders' waiting queues must be than a drain target's
     * @param timeoutNanos     how long a drain may last at most
     * @param cooldownNanos    how long after a drain ends before another starts on the same endpoint
     * @param persistenceNanos how long a drain must be wanted, at every request sent for the adapter, before it
     *                         starts: a burst makes queues uneven for a moment, a frozen placement for as long as it
     *                         lasts
     */
    public record Settings(int overloadWaiting, long timeoutNanos, long cooldownNanos, long persistenceNanos) {
        public static final Settings DEFAULT = new Settings(
                DEFAULT_OVERLOAD_WAITING, DEFAULT_TIMEOUT_NANOS, DEFAULT_COOLDOWN_NANOS, DEFAULT_PERSISTENCE_NANOS);

        /** These settings with drains that start as soon as they are wanted. */
        public Settings startingAtOnce() {
            return new Settings(overloadWaiting, timeoutNanos, cooldownNanos, 0);
        }
    }

    public LoraSpreadFilter(LongSupplier nanoClock, Settings settings) {
        this.nanoClock = nanoClock;
        this.overloadWaiting = settings.overloadWaiting();
        this.timeoutNanos = settings.timeoutNanos();
        this.cooldownNanos = settings.cooldownNanos();
        this.persistenceNanos = settings.persistenceNanos();
    }

    public LoraSpreadFilter(LongSupplier nanoClock) {
        this(nanoClock, Settings.DEFAULT);
    }

    public Settings settings() {
        return new Settings(overloadWaiting, timeoutNanos, cooldownNanos, persistenceNanos);
    }

    @Override
    public String name() {
        return NAME;
    }

    /** The drains in progress: endpoint to the adapter no longer sent there. */
    public Map<Endpoint, String> drains() {
        Map<Endpoint, String> view = new HashMap<>();
        drains.forEach((endpoint, drain) -> view.put(endpoint, drain.adapter()));
        return view;
    }

    /** A drain in progress, for the router's metrics: {@code adapter} leaves {@code endpoint} for {@code forAdapter}. */
    public record DrainView(Endpoint endpoint, String adapter, String forAdapter) {}

    public List<DrainView> drainsInProgress() {
        List<DrainView> view = new ArrayList<>();
        drains.forEach((endpoint, drain) -> view.add(new DrainView(endpoint, drain.adapter(), drain.forAdapter())));
        return view;
    }

    /** Drains started since this filter was made: each moves a batch slot from one adapter to another. */
    public long drainsStarted() {
        return drainsStarted.get();
    }

    @Override
    public List<EndpointState> filter(PickRequest request, List<EndpointState> candidates) {
        if (request.baseModel()) {
            return candidates;
        }
        Step step = step(request.model(), candidates, nanoClock.getAsLong());
        if (drains.isEmpty() && step.started() == null) {
            return candidates;
        }
        List<EndpointState> kept = new ArrayList<>(candidates.size());
        for (EndpointState state : candidates) {
            Drain drain = step.drainAt(state.endpoint());
            if (drain != null && drain.forAdapter().equals(request.model()) && hasRoom(state.metrics(), drain)) {
                return List.of(state); // the slot is free: this is where the adapter was meant to go
            }
            if (drain == null || mayGo(request.model(), drain, state.metrics())) {
                kept.add(state);
            }
        }
        return kept.isEmpty() ? candidates : kept;
    }

    /**
     * A request goes out: the drains its pick saw ending end, and the one it saw start starts. Picks only look (a
     * request held for a slot is picked for again and again), so the drain state moves once per request sent.
     */
    @Override
    public void preRequest(Dispatch dispatch) {
        PickRequest request = dispatch.request();
        if (request.baseModel()) {
            return;
        }
        long now = nanoClock.getAsLong();
        Step step = step(request.model(), dispatch.candidates(), now);
        for (Map.Entry<Endpoint, Drain> ended : step.ended().entrySet()) {
            if (drains.remove(ended.getKey(), ended.getValue())) {
                drainEnded.put(ended.getKey(), now);
            }
        }
        if (step.proposal() == null) {
            overloadedSince.remove(request.model());
            return;
        }
        overloadedSince.putIfAbsent(request.model(), now);
        if (step.started() != null && drains.putIfAbsent(step.proposal().endpoint(), step.started()) == null) {
            drainsStarted.incrementAndGet();
            overloadedSince.remove(request.model());
        }
    }

    /**
     * What one request's pick sees happen to the drains, without changing them: the drains that end (timed out, or
     * their adapter arrived, or another took the slot), the drain it would want started, and whether it starts now
     * (wanted long enough, or a rescue).
     */
    private record Step(Map<Endpoint, Drain> ended, Proposal proposal, Drain started, Map<Endpoint, Drain> drains) {
        /** The drain on {@code endpoint} once this step is taken. */
        Drain drainAt(Endpoint endpoint) {
            if (started != null && proposal.endpoint().equals(endpoint)) {
                return started;
            }
            return ongoing(drains, ended, endpoint);
        }
    }

    /** The drain on {@code endpoint} that goes on past this pick: none, or one of {@code ended}, is null. */
    private static Drain ongoing(Map<Endpoint, Drain> drains, Map<Endpoint, Drain> ended, Endpoint endpoint) {
        return ended.containsKey(endpoint) ? null : drains.get(endpoint);
    }

    private Step step(String adapter, List<EndpointState> candidates, long now) {
        Map<Endpoint, Drain> ended = endingDrains(candidates, now);
        Proposal p = proposeDrain(adapter, candidates, now, ended);
        Drain started = null;
        if (p != null) {
            long since = overloadedSince.getOrDefault(adapter, now);
            // A burst passes by itself; a frozen placement does not.
            boolean wantedLongEnough = p.rescue() || now - since >= persistenceNanos;
            boolean endpointFree = ongoing(drains, ended, p.endpoint()) == null;
            if (wantedLongEnough && endpointFree) {
                started = p.drain();
            }
        }
        return new Step(ended, p, started, drains);
    }

    /**
     * During a drain an endpoint takes the adapter it is drained for and adapters already in its slots, except the
     * drained one; any other adapter would take the slot being freed.
     */
    private static boolean mayGo(String adapter, Drain drain, EndpointMetrics m) {
        if (adapter.equals(drain.forAdapter())) {
            return true;
        }
        return !adapter.equals(drain.adapter()) && LoraPlacement.of(m, adapter) == LoraPlacement.IN_SLOT;
    }

    private static boolean hasRoom(EndpointMetrics m, Drain drain) {
        LoraPlacement placement = LoraPlacement.of(m, drain.forAdapter());
        return placement != LoraPlacement.ALL_SLOTS_BUSY
                && placement != LoraPlacement.QUEUED
                && placement != LoraPlacement.IN_SLOT;
    }

    /** The drains that end at this pick: timed out (anywhere, ready or not), or over on one of the candidates. */
    private Map<Endpoint, Drain> endingDrains(List<EndpointState> candidates, long now) {
        if (drains.isEmpty()) {
            return Map.of();
        }
        Map<Endpoint, Drain> ending = new HashMap<>();
        for (var entry : drains.entrySet()) {
            if (now - entry.getValue().sinceNanos() > timeoutNanos) {
                ending.put(entry.getKey(), entry.getValue());
            }
        }
        for (EndpointState state : candidates) {
            Drain drain = drains.get(state.endpoint());
            if (drain == null) {
                continue;
            }
            EndpointMetrics m = state.metrics();
            AdapterResidency drained = m.residency().get(drain.adapter());
            boolean arrived = LoraPlacement.of(m, drain.forAdapter()) == LoraPlacement.IN_SLOT;
            boolean slotTakenByAnother = (drained == null || !drained.inSlot()) && m.gpuSlotsUsed() >= m.gpuSlots();
            if (arrived || slotTakenByAnother) {
                ending.put(state.endpoint(), drain);
            }
        }
        return ending;
    }

    /**
     * A drain to start on {@code endpoint}; {@code rescue} when the adapter is held nowhere and its requests are stuck:
     * no burst explains that, so it starts at once.
     */
    private record Proposal(Endpoint endpoint, Drain drain, boolean rescue) {}

    /**
     * A drain wanted for {@code adapter} when no endpoint has room for it and either no endpoint holds it while its
     * requests are stuck somewhere (queued where it has no slot and every slot is busy: they wait until some adapter
     * there has no request left, under steady traffic never; the drain is then where they wait), or every endpoint
     * holding it has a long queue or many requests (the drain is then on an endpoint with a much shorter queue or
     * half the requests); null when none is. {@code ended}: the drains that end at this pick. An endpoint draining
     * {@code adapter} is not one of its holders: no request for it goes there.
     */
    private Proposal proposeDrain(
            String adapter, List<EndpointState> candidates, long now, Map<Endpoint, Drain> ended) {
        if (candidates.size() < 2) {
            return null;
        }
        int holdersMinWaiting = Integer.MAX_VALUE;
        long holdersMinLoad = Long.MAX_VALUE;
        boolean stuckSomewhere = false;
        boolean drainedSomewhere = false;
        boolean[] holder = new boolean[candidates.size()];
        for (int i = 0; i < holder.length; i++) {
            EndpointMetrics m = candidates.get(i).metrics();
            if (!m.hasResidencyFamilies()) {
                return null; // without residency the idle slots are invisible; draining would be blind
            }
            Endpoint endpoint = candidates.get(i).endpoint();
            Drain drain = ongoing(drains, ended, endpoint);
            if (drain != null && drain.adapter().equals(adapter)) {
                // Drained there: its slot is still there, but no request for it is sent there. Counted as a holder,
                // its short queue would hide how loaded the holders its traffic now goes to are.
                drainedSomewhere = true;
                continue;
            }
            LoraPlacement placement = LoraPlacement.of(m, adapter);
            holder[i] = holds(placement);
            if (holder[i]) {
                holdersMinWaiting = Math.min(holdersMinWaiting, m.waitingRequests());
                holdersMinLoad = Math.min(holdersMinLoad, load(m));
            } else if (placement != LoraPlacement.ALL_SLOTS_BUSY && placement != LoraPlacement.QUEUED) {
                return null; // some endpoint has room already
            } else if (m.adapterWaiting(adapter) > 0) {
                stuckSomewhere = true;
            }
        }
        boolean noHolder = holdersMinWaiting == Integer.MAX_VALUE;
        if (noHolder && (!stuckSomewhere || drainedSomewhere)) {
            // A first request: it goes where it waits least, as usual. Or its only copies are being drained: a
            // rescue would undo the drain it is the victim of (once that ends and its requests are stuck, one may).
            return null;
        }
        for (var entry : drains.entrySet()) {
            if (entry.getValue().forAdapter().equals(adapter) && !ended.containsKey(entry.getKey())) {
                return null;
            }
        }
        Map<String, Integer> slotHolders = null;
        EndpointState target = null;
        Victim best = null;
        for (int i = 0; i < holder.length; i++) {
            EndpointState state = candidates.get(i);
            EndpointMetrics m = state.metrics();
            Long endedAt = ended.containsKey(state.endpoint()) ? (Long) now : drainEnded.get(state.endpoint());
            boolean draining = ongoing(drains, ended, state.endpoint()) != null;
            if ((endedAt != null && now - endedAt < cooldownNanos)
                    || draining
                    || holder[i]
                    || (!noHolder && hasQueuedSlotClaim(m, adapter))) {
                // (for an adapter held nowhere, any stuck adapter that takes the freed slot is progress)
                continue;
            }
            // A target with a long queue has no room either: the freed slot would only sit behind that queue.
            boolean muchLighter = m.waitingRequests() <= MAX_TARGET_WAITING
                    && (holdersMinWaiting - m.waitingRequests() >= overloadWaiting
                            || muchLessLoaded(m, holdersMinLoad));
            if (noHolder ? m.adapterWaiting(adapter) == 0 : !muchLighter) {
                continue; // stuck requests are served where they wait; otherwise only a much lighter endpoint helps
            }
            if (slotHolders == null) {
                slotHolders = slotHolders(candidates, ended);
            }
            Victim victim = victim(m, adapter, slotHolders);
            if (victim != null
                    && (best == null
                            || victim.betterThan(best)
                            || (!best.betterThan(victim) && load(m) < load(target.metrics())))) {
                target = state;
                best = victim;
            }
        }
        return target == null
                ? null
                : new Proposal(target.endpoint(), new Drain(best.adapter(), adapter, now), noHolder);
    }

    /** The adapter is in a slot there, or requests for it wait there with a slot to be had (it is loading). */
    private static boolean holds(LoraPlacement placement) {
        return placement == LoraPlacement.IN_SLOT || placement == LoraPlacement.LOADING;
    }

    /** Requests queued there for another adapter without a slot would take the freed slot first. */
    private static boolean hasQueuedSlotClaim(EndpointMetrics m, String adapter) {
        for (var entry : m.adapterWaiting().entrySet()) {
            AdapterResidency r = m.residency().get(entry.getKey());
            if (entry.getValue() > 0
                    && (r == null || !r.inSlot())
                    && !entry.getKey().equals(adapter)) {
                return true;
            }
        }
        return false;
    }

    private static boolean muchLessLoaded(EndpointMetrics target, long holdersMinLoad) {
        return holdersMinLoad >= MIN_OVERLOAD_REQUESTS && holdersMinLoad >= OVERLOAD_REQUESTS_RATIO * load(target);
    }

    private static long load(EndpointMetrics m) {
        return (long) m.waitingRequests() + m.runningRequests();
    }

    /**
     * The unpinned slot adapter whose slot frees soonest: one another endpoint also holds in a slot (and is not
     * draining), so its traffic has somewhere to go at once, then the fewest requests there. {@code slotHolders}
     * counts, per adapter, the endpoints holding it in a slot and not draining it; the target endpoint is one of
     * them for each of its own slot adapters (it has no drain).
     */
    private static Victim victim(EndpointMetrics m, String forAdapter, Map<String, Integer> slotHolders) {
        Victim best = null;
        for (var entry : m.residency().entrySet()) {
            String name = entry.getKey();
            if (!entry.getValue().inSlot() || entry.getValue().pinned() || name.equals(forAdapter)) {
                continue;
            }
            Victim v = new Victim(
                    name, slotHolders.getOrDefault(name, 0) > 1, m.adapterRunning(name) + m.adapterWaiting(name));
            if (best == null || v.betterThan(best)) {
                best = v;
            }
        }
        return best;
    }

    /** Per adapter, how many candidates hold it in a slot without draining it: counted once per drain decision. */
    private Map<String, Integer> slotHolders(List<EndpointState> candidates, Map<Endpoint, Drain> ended) {
        Map<String, Integer> counts = new HashMap<>();
        for (EndpointState state : candidates) {
            Drain drain = ongoing(drains, ended, state.endpoint());
            for (var entry : state.metrics().residency().entrySet()) {
                if (entry.getValue().inSlot()
                        && (drain == null || !drain.adapter().equals(entry.getKey()))) {
                    counts.merge(entry.getKey(), 1, Integer::sum);
                }
            }
        }
        return counts;
    }
}
