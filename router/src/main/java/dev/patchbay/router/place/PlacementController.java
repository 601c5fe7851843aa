package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Places adapters across the fleet: at each tick it folds the arrivals it was told of into rates, reads the fleet,
 * asks its {@link PlacementAlgorithm} for each adapter's homes, and, when the algorithm acts, loads the missing homes
 * of adapters with several ahead of demand (at most {@code maxLoadsPerTick} a tick; a home whose preload was evicted
 * waits {@code reloadCooldown} ticks before it is loaded again, twice as long after each further load, up to 64
 * times: where host memory churns, a home is not worth a load every few seconds) and releases surplus copies. A copy
 * is surplus when its adapter has planned homes elsewhere, one of them holding it, and it is neither a home, pinned,
 * nor busy there. Release has two phases, so no request is sent to a copy being unloaded: routing stops sending the
 * adapter there once it has been surplus, and not sent there by this router, for {@code releaseAfter} ticks, and the
 * unload goes out at the next tick if the server still shows no request for it. A server whose admin API fails a
 * call (switched off, say) is left alone for {@link #BACKOFF_TICKS} ticks. Ticks run on the thread that calls
 * {@link #onRound} (the pool's scrape rounds); loads and unloads answer on the admin's threads.
 */
public final class PlacementController {
    private final PlacementSettings settings;
    private final PlacementAlgorithm algorithm;
    private final Supplier<FleetState> fleet;
    private final AdapterAdmin admin;
    private final LongSupplier nanoClock;
    private final AdapterRates rates;

    private long lastTickNanos = Long.MIN_VALUE;
    private volatile long tick;
    private Map<String, List<Endpoint>> previous = Map.of();
    private final Map<Pair, Long> surplusSince = new HashMap<>();
    private final Map<Pair, Long> lastLoadTick = new HashMap<>();
    /** Loads placement asked for each home so far: a home whose copy keeps being evicted waits longer each time. */
    private final Map<Pair, Integer> loadsAsked = new HashMap<>();

    /** The tick of this router's last send of each adapter to each server (sends come from request threads). */
    private final Map<Pair, Long> lastSentTick = new ConcurrentHashMap<>();

    private final Set<Pair> releasing = ConcurrentHashMap.newKeySet();
    private final Set<Pair> pending = ConcurrentHashMap.newKeySet();
    /** The tick of each server's last failed load or unload: it is left alone for {@link #BACKOFF_TICKS}. */
    private final Map<Endpoint, Long> failedAt = new ConcurrentHashMap<>();
    /** A server whose admin API failed (off, or broken) is not asked again for this many ticks. */
    static final long BACKOFF_TICKS = 60;

    private volatile Placement placement = Placement.NONE;
    private volatile Report report = Report.EMPTY;

    private final AtomicLong loadsStarted = new AtomicLong();
    private final AtomicLong loadsFailed = new AtomicLong();
    private final AtomicLong unloadsStarted = new AtomicLong();
    private final AtomicLong unloadsFailed = new AtomicLong();

    private record Pair(String adapter, Endpoint endpoint) {}

    /**
     */
    public PlacementController(
            PlacementSettings settings,
            PlacementAlgorithm algorithm,
            Supplier<FleetState> fleet,
            AdapterAdmin admin,
            LongSupplier nanoClock) {
        this.settings = settings;
        this.algorithm = algorithm;
        this.fleet = fleet;
        this.admin = admin;
        this.nanoClock = nanoClock;
        this.rates = new AdapterRates(settings.rateHalfLife().toNanos() / 1e9);
    }

    /** A request for {@code adapter} arrived at this router. */
    public void arrived(String adapter) {
        rates.arrived(adapter);
    }

    /** This router sent a request for {@code adapter} to {@code endpoint}: the copy there is in use. */
    public void sent(String adapter, Endpoint endpoint) {
        // The later tick wins: a sender that read the tick before others' sends must not set it back.
        lastSentTick.merge(new Pair(adapter, endpoint), tick, Math::max);
    }

    /** The placement routing reads now. */
    public Placement placement() {
        return placement;
    }

    /** What the last tick decided and saw, for the admin endpoint and the metrics. */
    public Report report() {
        return report;
    }

    /** Arrivals counted per adapter while its rate has been remembered. */
    public Map<String, Long> arrivalTotals() {
        return rates.arrivalTotals();
    }

    public String algorithm() {
        return algorithm.name();
    }

    public long loadsStarted() {
        return loadsStarted.get();
    }

    public long loadsFailed() {
        return loadsFailed.get();
    }

    public long unloadsStarted() {
        return unloadsStarted.get();
    }

    public long unloadsFailed() {
        return unloadsFailed.get();
    }

    /** After each scrape round: ticks once the interval has passed since the last tick. */
    public synchronized void onRound() {
        long now = nanoClock.getAsLong();
        if (lastTickNanos != Long.MIN_VALUE
                && now - lastTickNanos < settings.interval().toNanos()) {
            return;
        }
        double seconds = lastTickNanos == Long.MIN_VALUE ? 0 : (now - lastTickNanos) / 1e9;
        lastTickNanos = now;
        tick(seconds);
    }

    private void tick(double seconds) {
        tick++;
        Map<String, Double> observed = rates.tick(seconds);
        FleetState state = fleet.get();
        if (state.servers().isEmpty()) {
            publish(observed, state, Map.of());
            return;
        }
        Map<String, List<Endpoint>> homes = algorithm.plan(observed, state, previous);
        previous = homes;
        if (algorithm.acts()) {
            preload(homes, state);
            release(homes, state);
        }
        publish(observed, state, homes);
    }

    private void preload(Map<String, List<Endpoint>> homes, FleetState state) {
        int left = settings.maxLoadsPerTick();
        for (var e : homes.entrySet()) {
            String adapter = e.getKey();
            // One home is where on-demand loading puts an adapter anyway; a load ahead of demand pays for an
            // adapter hot enough to need several, whose next burst should find it on all of them.
            if (e.getValue().size() < 2) continue;
            for (Endpoint home : e.getValue()) {
                Pair pair = new Pair(adapter, home);
                ServerView server = state.server(home);
                if (server.holds(adapter) || pending.contains(pair) || left == 0 || backingOff(home)) continue;
                Long last = lastLoadTick.get(pair);
                int asked = loadsAsked.getOrDefault(pair, 0);
                long cooldown = (long) settings.reloadCooldown() << Math.min(asked - 1, 6);
                if (last != null && tick - last <= cooldown) continue;
                String path = state.path(adapter);
                boolean served = server.serves(adapter) && !releasing.contains(pair);
                if (path == null) continue; // vLLM's API and Patchbay's both need the files' path
                left--;
                lastLoadTick.put(pair, tick);
                loadsAsked.merge(pair, 1, Integer::sum);
                pending.add(pair);
                loadsStarted.incrementAndGet();
                admin.load(home, adapter, path, served).whenComplete((ok, failure) -> {
                    if (failure != null) {
                        loadsFailed.incrementAndGet();
                        failedAt.put(home, tick);
                    } else {
                        releasing.remove(pair);
                    }
                    pending.remove(pair);
                });
            }
        }
    }

    private void release(Map<String, List<Endpoint>> homes, FleetState state) {
        Set<Pair> stillSurplus = new HashSet<>();
        for (ServerView server : state.servers()) {
            for (String adapter : server.resident().keySet()) {
                List<Endpoint> planned = homes.get(adapter);
                if (planned == null
                        || planned.contains(server.endpoint())
                        || server.pinned(adapter)
                        || server.inFlight(adapter) > 0
                        || planned.stream().noneMatch(state.holders(adapter)::contains)) {
                    continue;
                }
                Pair pair = new Pair(adapter, server.endpoint());
                if (backingOff(server.endpoint()) && !releasing.contains(pair)) continue;
                stillSurplus.add(pair);
                // Idle since it became surplus or since this router last sent the adapter there, whichever is later.
                long since =
                        Math.max(surplusSince.computeIfAbsent(pair, p -> tick), lastSentTick.getOrDefault(pair, 0L));
                if (pending.contains(pair)) continue;
                if (releasing.contains(pair)) {
                    // Routing has not sent it there since the last tick and the server shows none: unload now.
                    pending.add(pair);
                    unloadsStarted.incrementAndGet();
                    admin.unload(server.endpoint(), adapter).whenComplete((ok, failure) -> {
                        if (failure != null) {
                            // The copy stays and gets requests again; it may be tried once it is surplus anew.
                            unloadsFailed.incrementAndGet();
                            failedAt.put(pair.endpoint(), tick);
                            releasing.remove(pair);
                        }
                        pending.remove(pair);
                    });
                    surplusSince.put(pair, tick);
                } else if (tick - since >= settings.releaseAfter()) {
                    releasing.add(pair);
                }
            }
        }
        surplusSince.keySet().retainAll(stillSurplus);
        // A send older than releaseAfter ticks no longer delays a release.
        lastSentTick.values().removeIf(sent -> tick - sent > settings.releaseAfter());
        // An unloaded copy stays released (the server's model list may still show it for a while) until placement
        // loads it there again, or it is back and no longer surplus (loaded by someone else).
        releasing.removeIf(pair -> !pending.contains(pair)
                && !stillSurplus.contains(pair)
                && state.holders(pair.adapter()).contains(pair.endpoint()));
    }

    private boolean backingOff(Endpoint endpoint) {
        Long failed = failedAt.get(endpoint);
        return failed != null && tick - failed < BACKOFF_TICKS;
    }

    private void publish(Map<String, Double> observed, FleetState state, Map<String, List<Endpoint>> homes) {
        Map<String, Set<Endpoint>> released = new HashMap<>();
        for (Pair p : releasing)
            released.computeIfAbsent(p.adapter(), a -> new HashSet<>()).add(p.endpoint());
        placement = new Placement(tick, state.endpoints(), homes, released);
        Map<String, Report.AdapterPlacement> adapters = new LinkedHashMap<>();
        for (String adapter : BalancedPlacement.byRate(observed)) {
            List<Endpoint> actual = new ArrayList<>();
            for (ServerView s : state.servers()) {
                if (s.holds(adapter)) actual.add(s.endpoint());
            }
            adapters.put(
                    adapter,
                    new Report.AdapterPlacement(
                            observed.get(adapter),
                            homes.getOrDefault(adapter, List.of()),
                            actual,
                            List.copyOf(released.getOrDefault(adapter, Set.of()))));
        }
        report = new Report(algorithm.name(), tick, adapters);
    }

    /** What a tick decided: per adapter (by rate) its rate, desired homes, actual copies and released copies. */
    public record Report(String algorithm, long tick, Map<String, AdapterPlacement> adapters) {
        static final Report EMPTY = new Report("", 0, Map.of());

        public record AdapterPlacement(
                double rate, List<Endpoint> desired, List<Endpoint> actual, List<Endpoint> released) {}
    }
}
