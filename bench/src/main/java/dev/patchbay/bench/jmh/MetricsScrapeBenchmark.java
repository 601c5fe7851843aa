package dev.patchbay.bench.jmh;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.Counters;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.FinishCounts;
import dev.patchbay.engine.stats.FinishedRequest;
import dev.patchbay.engine.stats.LoraState;
import dev.patchbay.engine.stats.StepStats;
import dev.patchbay.metrics.EngineMetrics;
import dev.patchbay.metrics.MetricsOptions;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of a {@code /metrics} scrape with many resident adapters while a workload runs: between two scrapes the
 * engine publishes a step in which the adapters in batch slots and a few queued ones change their numbers.
 *
 * <ul>
 *   <li>{@code patchbayText}: the page as the server serves it (text 0.0.4, cached per-adapter lines);</li>
 *   <li>{@code patchbayTextStreamed}: the same page streamed into the response instead of one array;</li>
 *   <li>{@code libraryText}: the same registry through client_java's text writer alone, the reference;</li>
 *   <li>{@code routerFamilies}: what a router scraping every 50 ms asks for with {@code name[]}.</li>
 * </ul>
 * The page size of each setting is printed at setup.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class MetricsScrapeBenchmark {
    private static final String MODEL = "meta-llama/Llama-3.1-8B-Instruct";
    private static final int SLOTS = 8;
    private static final int QUEUED_CHANGES_PER_STEP = 8;
    private static final int STEPS = 256;
    private static final Set<String> ROUTER_FAMILIES = Set.of(
            "vllm:num_requests_running",
            "vllm:num_requests_waiting",
            "vllm:kv_cache_usage_perc",
            "vllm:lora_requests_info",
            "vllm:max_gpu_lora_adapters",
            "vllm:lora_adapter_loaded",
            "vllm:num_lora_requests_running",
            "vllm:num_lora_requests_waiting");

    /** Resident adapters: {@value SLOTS} in batch slots, the rest in host memory. */
    @Param({"10", "100", "1000"})
    public int adapters;

    private EngineMetrics metrics;
    private EngineSnapshot[] steps;
    private int next;
    private volatile EngineSnapshot latest;
    private final PrometheusTextFormatWriter libraryWriter = PrometheusTextFormatWriter.create();

    @Setup
    public void setUp() throws IOException {
        EngineConfig config = EngineConfig.builder(MODEL)
                .enableLora(true)
                .maxLoras(SLOTS)
                .maxCpuLoras(adapters)
                .enablePrefixCaching(true)
                .build();
        steps = workload(new Random(2026));
        latest = steps[0];
        metrics = new EngineMetrics(MetricsOptions.of(config), () -> latest);
        for (EngineSnapshot s : steps) metrics.accept(s);
        System.out.printf(
                "%n%d resident adapters: page %d bytes (text), %d bytes (router families)%n",
                adapters,
                metrics.scrape().body().length,
                metrics.scrape(ROUTER_FAMILIES, null).body().length);
    }

    /** One engine step, then the scrape that follows it. */
    private void step() {
        EngineSnapshot s = steps[next];
        next = (next + 1) % STEPS;
        latest = s;
        metrics.accept(s);
    }

    @Benchmark
    public byte[] patchbayText() {
        step();
        return metrics.scrape(Set.of(), null).body();
    }

    @Benchmark
    public String patchbayTextStreamed() throws IOException {
        step();
        return metrics.writeTo(Set.of(), null, OutputStream.nullOutputStream());
    }

    @Benchmark
    public byte[] libraryText() throws IOException {
        step();
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
        libraryWriter.write(out, metrics.registry().scrape());
        return out.toByteArray();
    }

    @Benchmark
    public byte[] routerFamilies() {
        step();
        return metrics.scrape(ROUTER_FAMILIES, null).body();
    }

    /** Snapshots of {@value STEPS} consecutive steps over the resident adapters. */
    private EngineSnapshot[] workload(Random random) {
        List<AdapterState> states = new ArrayList<>(adapters);
        for (int i = 0; i < adapters; i++) {
            AdapterState.Level level = i < SLOTS ? AdapterState.Level.GPU : AdapterState.Level.CPU;
            states.add(new AdapterState(
                    String.format("adapter-%04d", i),
                    i + 1,
                    0,
                    0,
                    level,
                    false,
                    i % 50 == 0,
                    16,
                    8L << 20,
                    0,
                    0,
                    FinishCounts.ZERO));
        }
        EngineSnapshot[] out = new EngineSnapshot[STEPS];
        long prompt = 0, generation = 0;
        FinishCounts finished = FinishCounts.ZERO;
        for (int step = 0; step < STEPS; step++) {
            List<FinishedRequest> done = new ArrayList<>();
            List<StepStats.FirstToken> first = new ArrayList<>();
            for (int i = 0; i < Math.min(SLOTS, adapters); i++) {
                AdapterState a = states.get(i);
                boolean finishes = random.nextInt(4) == 0;
                FinishCounts f = finishes ? a.finished().plus(FinishReason.STOP) : a.finished();
                states.set(
                        i,
                        new AdapterState(
                                a.name(),
                                a.id(),
                                1 + random.nextInt(8),
                                random.nextInt(3),
                                a.level(),
                                false,
                                a.pinned(),
                                a.rank(),
                                a.memoryBytes(),
                                a.promptTokens() + 200,
                                a.generationTokens() + 8,
                                f));
                first.add(new StepStats.FirstToken(a.name(), 0.05 + random.nextDouble() / 10));
                if (finishes) {
                    done.add(new FinishedRequest(
                            a.name(), FinishReason.STOP, 200, 64, 128, 1, 2.5, 0.1, 0.2, 2.2, 2.4, 0.035));
                    finished = finished.plus(FinishReason.STOP);
                }
            }
            for (int k = 0; k < QUEUED_CHANGES_PER_STEP && adapters > SLOTS; k++) {
                int i = SLOTS + random.nextInt(adapters - SLOTS);
                AdapterState a = states.get(i);
                states.set(
                        i,
                        new AdapterState(
                                a.name(),
                                a.id(),
                                0,
                                random.nextInt(3),
                                a.level(),
                                false,
                                a.pinned(),
                                a.rank(),
                                a.memoryBytes(),
                                a.promptTokens(),
                                a.generationTokens(),
                                a.finished()));
            }
            prompt += 1600;
            generation += 64;
            out[step] = snapshot(
                    step,
                    states,
                    prompt,
                    generation,
                    finished,
                    new StepStats(
                            true,
                            1664,
                            Math.min(SLOTS, adapters),
                            first,
                            List.of(0.03, 0.031, 0.029),
                            done,
                            step % 16 == 0
                                    ? List.of(new AdapterLoad("adapter-0001", AdapterLoad.Source.CPU, 0.004))
                                    : List.of()));
        }
        return out;
    }

    private EngineSnapshot snapshot(
            int step,
            List<AdapterState> states,
            long prompt,
            long generation,
            FinishCounts finished,
            StepStats lastStep) {
        List<String> running = new ArrayList<>(), waiting = new ArrayList<>();
        int numRunning = 0, numWaiting = 0;
        for (AdapterState a : states) {
            if (a.running() > 0) running.add(a.name());
            if (a.waiting() > 0) waiting.add(a.name());
            numRunning += a.running();
            numWaiting += a.waiting();
        }
        LoraState lora = new LoraState(
                SLOTS,
                adapters,
                16,
                "auto",
                List.copyOf(states),
                Math.min(SLOTS, adapters),
                Math.max(0, adapters - SLOTS),
                running,
                waiting,
                1.76e9 + step);
        Counters counters = new Counters(
                step / 10,
                prompt,
                generation,
                finished,
                new Counters.PrefixCache(prompt, prompt / 3),
                new Counters.Lora(
                        new Counters.BySource(adapters, step / 16),
                        Counters.ByTier.ZERO,
                        new Counters.ByTier(step * 8L, step / 16),
                        new Counters.ByTier(step * 8L, step / 16),
                        0));
        return new EngineSnapshot(
                step,
                step * 20_000_000L,
                1.76e9 + step * 0.02,
                MODEL,
                numRunning,
                numWaiting,
                0,
                0,
                8192,
                4000 + step,
                16,
                true,
                lora,
                counters,
                lastStep);
    }
}
