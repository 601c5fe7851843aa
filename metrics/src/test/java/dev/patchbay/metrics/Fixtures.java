package dev.patchbay.metrics;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.Counters;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.FinishCounts;
import dev.patchbay.engine.stats.FinishedRequest;
import dev.patchbay.engine.stats.LoraState;
import dev.patchbay.engine.stats.StepStats;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Hand-built engine snapshots for the metrics tests. */
final class Fixtures {
    private Fixtures() {}

    static final String MODEL = "meta-llama/Llama-3.1-8B-Instruct";

    static EngineConfig config(boolean lora) {
        return EngineConfig.builder(MODEL)
                .enableLora(lora)
                .maxLoras(4)
                .maxCpuLoras(8)
                .maxLoraRank(16)
                .enablePrefixCaching(true)
                .maxModelLen(4096)
                .blockSize(16)
                .numKvBlocks(1000)
                .build();
    }

    static MetricsOptions options(boolean lora) {
        return MetricsOptions.of(config(lora));
    }

    static AdapterState adapter(String name, int running, int waiting, Level level) {
        return new AdapterState(
                name,
                Math.abs(name.hashCode() % 1000) + 1,
                running,
                waiting,
                level,
                false,
                false,
                8,
                level == Level.NONE ? 0 : 1_048_576,
                10L * running,
                3L * running,
                FinishCounts.ZERO);
    }

    static AdapterState adapter(
            String name,
            int running,
            int waiting,
            Level level,
            boolean pinned,
            int rank,
            long memory,
            long prompt,
            long generation,
            FinishCounts finished) {
        return new AdapterState(
                name,
                Math.abs(name.hashCode() % 1000) + 1,
                running,
                waiting,
                level,
                false,
                pinned,
                rank,
                memory,
                prompt,
                generation,
                finished);
    }

    static Counters counters(long n) {
        return new Counters(
                n,
                100 * n,
                10 * n,
                new FinishCounts(n, 2 * n, 3 * n, 4 * n),
                new Counters.PrefixCache(50 * n, 20 * n),
                new Counters.Lora(
                        new Counters.BySource(n, 2 * n),
                        new Counters.ByTier(3 * n, 4 * n),
                        new Counters.ByTier(5 * n, 7 * n),
                        new Counters.ByTier(6 * n, 8 * n),
                        0));
    }

    static StepStats step(
            int tokens,
            int adapters,
            List<StepStats.FirstToken> first,
            List<Double> gaps,
            List<FinishedRequest> finished,
            List<AdapterLoad> loads) {
        return new StepStats(true, tokens, adapters, first, gaps, finished, loads);
    }

    static FinishedRequest finished(String adapter, double e2e) {
        return new FinishedRequest(
                adapter, FinishReason.STOP, 12, 30, 64, 1, e2e, 0.01, 0.02, e2e - 0.05, e2e - 0.03, 0.005);
    }

    /** A snapshot builder; LoRA counts and legacy name lists follow from the adapters. */
    static final class Snap {
        long sequence = 1;
        int running = 0, waiting = 0, deferred = 0, kvUsed = 250;
        long tokensWaiting;
        boolean prefixCaching = true;
        boolean lora = true;
        int maxLoras = 4, maxCpuLoras = 8;
        double activityChanged = 1.7395575657589855e9;
        List<AdapterState> adapters = new ArrayList<>();
        Counters counters = Fixtures.counters(1);
        StepStats step = StepStats.EMPTY;

        Snap sequence(long v) {
            sequence = v;
            return this;
        }

        Snap running(int v) {
            running = v;
            return this;
        }

        Snap waiting(int v) {
            waiting = v;
            return this;
        }

        /** Prompt tokens still to prefill. */
        Snap tokensWaiting(long v) {
            tokensWaiting = v;
            return this;
        }

        /** Of the waiting requests, those deferred for their adapter. */
        Snap deferred(int v) {
            deferred = v;
            return this;
        }

        Snap lora(boolean v) {
            lora = v;
            return this;
        }

        Snap prefixCaching(boolean v) {
            prefixCaching = v;
            return this;
        }

        Snap counters(Counters v) {
            counters = v;
            return this;
        }

        Snap step(StepStats v) {
            step = v;
            return this;
        }

        Snap activityChanged(double v) {
            activityChanged = v;
            return this;
        }

        Snap adapter(AdapterState a) {
            adapters.add(a);
            return this;
        }

        Snap adapters(List<AdapterState> a) {
            adapters.addAll(a);
            return this;
        }

        EngineSnapshot build() {
            List<AdapterState> sorted = new ArrayList<>(adapters);
            sorted.sort(Comparator.comparing(AdapterState::name));
            LoraState loraState = null;
            if (lora) {
                int slots = (int)
                        sorted.stream().filter(a -> a.level() == Level.GPU).count();
                int host = (int)
                        sorted.stream().filter(a -> a.level() == Level.CPU).count();
                List<String> runningNames = sorted.stream()
                        .filter(a -> a.running() > 0)
                        .map(AdapterState::name)
                        .toList();
                List<String> waitingNames = sorted.stream()
                        .filter(a -> a.waiting() > 0)
                        .map(AdapterState::name)
                        .toList();
                loraState = new LoraState(
                        maxLoras,
                        maxCpuLoras,
                        16,
                        "auto",
                        List.copyOf(sorted),
                        slots,
                        host,
                        runningNames,
                        waitingNames,
                        activityChanged);
            }
            return new EngineSnapshot(
                    sequence,
                    sequence * 1_000_000L,
                    1.7e9 + sequence,
                    MODEL,
                    running,
                    waiting,
                    deferred,
                    tokensWaiting,
                    1000,
                    kvUsed,
                    16,
                    prefixCaching,
                    loraState,
                    counters,
                    step);
        }
    }
}
