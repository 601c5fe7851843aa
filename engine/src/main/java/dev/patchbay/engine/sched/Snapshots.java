package dev.patchbay.engine.sched;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.adapter.AdapterRegistry;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.clock.Clock;
import dev.patchbay.engine.kv.KvCacheManager;
import dev.patchbay.engine.model.Model;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.Counters;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.EngineStats;
import dev.patchbay.engine.stats.FinishCounts;
import dev.patchbay.engine.stats.LoraState;
import dev.patchbay.engine.stats.StepStats;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Builds the immutable snapshots, counters read from the engine's stats. Engine thread only, except {@link #latest} and
 * {@link #withUnshown}.
 */
final class Snapshots {
    private final EngineConfig config;
    private final Clock clock;
    private final String loraDtype;
    private volatile EngineSnapshot latest;
    private long sequence;

    /** The adapters the last snapshot listed, with their states there. */
    private Map<RegisteredAdapter, AdapterState> listedLast = Map.of();
    /**
     * Each adapter that was listed once and is not now, as it was last listed: its totals cannot have moved since
     * (an adapter with a request in flight or resident is listed), so a request not yet shown lists it with them.
     */
    private final Map<RegisteredAdapter, AdapterState> dormant = new ConcurrentHashMap<>();

    private List<String> lastRunningNames = List.of();
    private List<String> lastWaitingNames = List.of();
    private double activityChanged;

    Snapshots(EngineConfig config, Model model, Clock clock) {
        this.config = config;
        this.clock = clock;
        this.loraDtype = config.loraDtype().equals("auto") ? model.dtype() : config.loraDtype();
        this.activityChanged = clock.unixSeconds();
    }

    EngineSnapshot latest() {
        return latest;
    }

    private static final Comparator<AdapterState> BY_NAME =
            Comparator.comparing(AdapterState::name).thenComparingInt(AdapterState::id);

    /**
     * {@code s} with the requests {@code unshown} holds counted as waiting, their adapters listed (the same snapshot
     * when there are none). Any thread.
     */
    EngineSnapshot withUnshown(EngineSnapshot s, UnshownArrivals unshown) {
        int more = unshown.total();
        if (more <= 0) return s;
        LoraState lora = s.lora();
        Map<RegisteredAdapter, Integer> byAdapter = unshown.byAdapter();
        if (lora != null && !byAdapter.isEmpty()) {
            List<AdapterState> states = new ArrayList<>(lora.adapters().size() + byAdapter.size());
            Map<Integer, Integer> waitingById = new HashMap<>();
            byAdapter.forEach((a, n) -> waitingById.put(a.id(), n));
            for (AdapterState state : lora.adapters()) {
                Integer n = waitingById.remove(state.id());
                states.add(n == null ? state : state.withWaiting(state.waiting() + n));
            }
            TreeSet<String> waitingNames = new TreeSet<>(lora.waitingAdapters());
            for (var entry : byAdapter.entrySet()) {
                RegisteredAdapter a = entry.getKey();
                waitingNames.add(a.name());
                if (!waitingById.containsKey(a.id())) continue; // listed already
                AdapterState last = dormant.get(a); // null: never listed, so no totals yet
                states.add(new AdapterState(
                        a.name(),
                        a.id(),
                        0,
                        entry.getValue(),
                        AdapterState.Level.NONE,
                        false,
                        a.pinned(),
                        a.spec().rank(),
                        0,
                        last == null ? 0 : last.promptTokens(),
                        last == null ? 0 : last.generationTokens(),
                        last == null ? FinishCounts.ZERO : last.finished()));
            }
            states.sort(BY_NAME);
            lora = new LoraState(
                    lora.maxLoras(),
                    lora.maxCpuLoras(),
                    lora.maxLoraRank(),
                    lora.loraDtype(),
                    List.copyOf(states),
                    lora.slotsUsed(),
                    lora.hostOnly(),
                    lora.runningAdapters(),
                    List.copyOf(waitingNames),
                    lora.activityChangedUnixSeconds());
        }
        return new EngineSnapshot(
                s.sequence(),
                s.nanos(),
                s.unixSeconds(),
                s.modelName(),
                s.numRunning(),
                s.numWaiting() + more,
                s.numWaitingDeferred(),
                s.tokensWaiting() + unshown.promptTokens(),
                s.kvBlocksTotal(),
                s.kvBlocksUsed(),
                s.blockSize(),
                s.prefixCaching(),
                lora,
                s.counters(),
                s.lastStep());
    }

    EngineSnapshot publish(
            Scheduler scheduler, KvCacheManager kv, AdapterRegistry adapters, EngineStats stats, StepStats step) {
        double now = clock.unixSeconds();
        LoraState lora = null;
        if (config.enableLora()) {
            Collection<RegisteredAdapter> listed = adapters.listed();
            List<AdapterState> states = new ArrayList<>(listed.size());
            List<String> runningNames = new ArrayList<>();
            List<String> waitingNames = new ArrayList<>();
            Map<RegisteredAdapter, AdapterState> listedNow = new HashMap<>(listed.size() * 2);
            for (RegisteredAdapter a : listed) {
                AdapterState state = new AdapterState(
                        a.name(),
                        a.id(),
                        a.running(),
                        a.waiting(),
                        a.level(),
                        a.loading(),
                        a.pinned(),
                        a.spec().rank(),
                        a.level() == AdapterState.Level.NONE ? 0 : a.spec().weightBytes(),
                        stats.promptTokens(a),
                        stats.generationTokens(a),
                        stats.finished(a));
                states.add(state);
                listedNow.put(a, state);
                if (!listedLast.containsKey(a)) dormant.remove(a);
                if (a.running() > 0) runningNames.add(a.name());
                if (a.waiting() > 0) waitingNames.add(a.name());
            }
            for (var last : listedLast.entrySet()) {
                RegisteredAdapter a = last.getKey();
                if (!listedNow.containsKey(a) && a.phase() != RegisteredAdapter.Phase.UNLOADED) {
                    dormant.put(a, last.getValue());
                }
            }
            listedLast = listedNow;
            states.sort(BY_NAME);
            runningNames.sort(null);
            waitingNames.sort(null);
            if (!runningNames.equals(lastRunningNames) || !waitingNames.equals(lastWaitingNames)) {
                lastRunningNames = List.copyOf(runningNames);
                lastWaitingNames = List.copyOf(waitingNames);
                activityChanged = now;
            }
            lora = new LoraState(
                    config.maxLoras(),
                    config.maxCpuLoras(),
                    config.maxLoraRank(),
                    loraDtype,
                    List.copyOf(states),
                    adapters.slotsUsed(),
                    adapters.hostResident() - adapters.slotsUsed(),
                    lastRunningNames,
                    lastWaitingNames,
                    activityChanged);
        }
        Counters counters = stats.counters();
        EngineSnapshot s = new EngineSnapshot(
                ++sequence,
                clock.nanos(),
                now,
                config.servedModelName(),
                scheduler.numRunning(),
                scheduler.numWaiting(),
                scheduler.numDeferred(),
                scheduler.tokensToPrefill(),
                kv.numBlocks(),
                kv.numUsed(),
                kv.blockSize(),
                config.enablePrefixCaching(),
                lora,
                counters,
                step);
        latest = s;
        return s;
    }
}
