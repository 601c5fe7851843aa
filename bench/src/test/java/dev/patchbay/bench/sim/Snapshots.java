package dev.patchbay.bench.sim;

import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.Counters;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.FinishCounts;
import dev.patchbay.engine.stats.LoraState;
import dev.patchbay.engine.stats.StepStats;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Hand-built engine snapshots: what one replica looks like at an instant. */
final class Snapshots {
    private final int maxLoras;
    private int waiting, running;
    private double kvUsage;
    private final List<AdapterState> adapters = new ArrayList<>();

    private Snapshots(int maxLoras) {
        this.maxLoras = maxLoras;
    }

    static Snapshots replica(int maxLoras) {
        return new Snapshots(maxLoras);
    }

    Snapshots queue(int waitingRequests, int runningRequests) {
        waiting = waitingRequests;
        running = runningRequests;
        return this;
    }

    Snapshots kv(double usage) {
        kvUsage = usage;
        return this;
    }

    /** An adapter at {@code level} with that many running and waiting requests. */
    Snapshots adapter(String name, Level level, int runningRequests, int waitingRequests) {
        adapters.add(new AdapterState(
                name,
                adapters.size() + 1,
                runningRequests,
                waitingRequests,
                level,
                false,
                false,
                8,
                level == Level.NONE ? 0 : 1000,
                0,
                0,
                FinishCounts.ZERO));
        return this;
    }

    EngineSnapshot build() {
        adapters.sort(Comparator.comparing(AdapterState::name));
        int slots = 0, hostOnly = 0;
        List<String> runningNames = new ArrayList<>(), waitingNames = new ArrayList<>();
        for (AdapterState a : adapters) {
            if (a.level() == Level.GPU) slots++;
            if (a.level() == Level.CPU) hostOnly++;
            if (a.running() > 0) runningNames.add(a.name());
            if (a.waiting() > 0) waitingNames.add(a.name());
        }
        LoraState lora = new LoraState(
                maxLoras, 32, 16, "float16", List.copyOf(adapters), slots, hostOnly, runningNames, waitingNames, 0);
        Counters counters = Counters.ZERO;
        int total = 1000;
        return new EngineSnapshot(
                1,
                0,
                0,
                "sim",
                running,
                waiting,
                0,
                0,
                total,
                (int) Math.round(kvUsage * total),
                16,
                false,
                lora,
                counters,
                StepStats.EMPTY);
    }
}
