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
import dev.patchbay.engine.stats.LoraState;
import dev.patchbay.engine.stats.StepStats;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/** Builds the immutable snapshots, counters read from the engine's stats. Engine thread only, except {@link #latest}. */
final class Snapshots {
    private final EngineConfig config;
    private final Clock clock;
    private final String loraDtype;
    private volatile EngineSnapshot latest;
    private long sequence;

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

    EngineSnapshot publish(
            Scheduler scheduler, KvCacheManager kv, AdapterRegistry adapters, EngineStats stats, StepStats step) {
        double now = clock.unixSeconds();
        LoraState lora = null;
        if (config.enableLora()) {
            Collection<RegisteredAdapter> listed = adapters.listed();
            List<AdapterState> states = new ArrayList<>(listed.size());
            List<String> runningNames = new ArrayList<>();
            List<String> waitingNames = new ArrayList<>();
            for (RegisteredAdapter a : listed) {
                states.add(new AdapterState(
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
                        stats.finished(a)));
                if (a.running() > 0) runningNames.add(a.name());
                if (a.waiting() > 0) waitingNames.add(a.name());
            }
            states.sort(Comparator.comparing(AdapterState::name).thenComparingInt(AdapterState::id));
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
