package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.EngineRequest;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.clock.VirtualClock;
import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import dev.patchbay.engine.sim.VirtualEngineDriver;
import dev.patchbay.engine.stats.Counters;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The stats line on the virtual clock: what it reports over an interval, and when it stays quiet. */
class StatsLoggerTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long INTERVAL = StatsLogger.DEFAULT_INTERVAL_NANOS;

    @TempDir
    Path dir;

    private final VirtualClock clock = new VirtualClock();
    private final List<String> lines = new ArrayList<>();
    private EngineCore core;
    private VirtualEngineDriver driver;

    private StatsLogger start(EngineConfig config) {
        return start(config, LatencyModel.DEFAULT);
    }

    private StatsLogger start(EngineConfig config, LatencyModel latency) {
        SimModel model = new SimModel("m", SimModel.DEFAULT_CONFIG, latency, TextMode.RANDOM, 0.0);
        core = new EngineCore(config, model, clock, null, () -> {});
        driver = new VirtualEngineDriver(core, clock);
        return new StatsLogger(core::snapshot, clock, lines::add);
    }

    private void register(String name) throws Exception {
        core.loadAdapter(
                name,
                PeftWriter.write(
                        dir.resolve(name), SimModel.DEFAULT_CONFIG, "m", 8, 16, List.of("q_proj"), name.hashCode()),
                false,
                false);
    }

    private void submit(String adapter, int outputTokens) throws Exception {
        submit(adapter, 4, outputTokens);
    }

    private void submit(String adapter, int promptTokens, int outputTokens) throws Exception {
        int[] prompt = new int[promptTokens];
        for (int i = 0; i < promptTokens; i++) prompt[i] = 300 + i;
        core.submit(
                new EngineRequest(prompt, adapter, SamplingParams.fixedLength(outputTokens), clock.nanos(), out -> {}));
    }

    /**
     * Runs the engine to the end of the current interval, then ticks as the server's timer does. Returns the interval's
     * length: a step under way at its end finishes first.
     */
    private double nextInterval(StatsLogger logger) {
        return nextInterval(logger, INTERVAL);
    }

    private double nextInterval(StatsLogger logger, long nanos) {
        long start = clock.nanos();
        driver.runUntil(start + nanos);
        logger.tick();
        return (clock.nanos() - start) / 1e9;
    }

    @Test
    void anIntervalWithWorkReportsItsThroughputRequestsKvUseSlotsAndLoads() throws Exception {
        StatsLogger logger = start(EngineConfig.builder("m")
                .enableLora(true)
                .maxLoras(2)
                .maxCpuLoras(3)
                .numKvBlocks(1000)
                .maxModelLen(4096)
                .seed(3)
                .build());
        register("a");
        register("b");
        nextInterval(logger);
        assertThat(lines).as("an idle engine, nothing changed").isEmpty();

        Counters before = core.snapshot().counters();
        for (int i = 0; i < 3; i++) submit("a", 100_000);
        submit("b", 20);
        submit(null, 100_000);
        double seconds = nextInterval(logger);

        Counters after = core.snapshot().counters();
        long generated = after.generationTokens() - before.generationTokens();
        assertThat(generated).isPositive();
        assertThat(lines)
                .containsExactly(String.format(
                        Locale.ROOT,
                        "Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: 4 reqs,"
                                + " Waiting: 0 reqs, GPU KV cache usage: %.1f%%, LoRA adapters in slots: 2/2,"
                                + " LoRA loads: 4 (2 from disk, 2 into slots)",
                        (after.promptTokens() - before.promptTokens()) / seconds,
                        generated / seconds,
                        core.snapshot().kvCacheUsage() * 100));
    }

    @Test
    void theLineStopsOnceTheEngineIsIdleAndComesBackWithWork() throws Exception {
        StatsLogger logger = start(EngineConfig.builder("m")
                .enableLora(true)
                .maxLoras(1)
                .maxCpuLoras(2)
                .numKvBlocks(100)
                .build());
        register("a");
        submit("a", 50);
        nextInterval(logger);
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0))
                .contains("Running: 0 reqs, Waiting: 0 reqs", "LoRA loads: 2 (1 from disk, 1 into slots)");

        nextInterval(logger);
        nextInterval(logger);
        assertThat(lines).as("idle and unchanged: quiet").hasSize(1);

        // Requests that run and finish within one interval leave no request in flight, but the counters moved.
        submit(null, 5);
        nextInterval(logger);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1))
                .contains("Running: 0 reqs", "LoRA adapters in slots: 1/1", "LoRA loads: 0 (0 from disk, 0 into slots)")
                .doesNotContain("Avg generation throughput: 0.0");

        // An unload while idle changes what the slots hold: one line says so.
        core.unloadAdapter("a");
        nextInterval(logger);
        assertThat(lines).hasSize(3);
        assertThat(lines.get(2)).contains("LoRA adapters in slots: 0/1", "Avg generation throughput: 0.0 tokens/s");
        nextInterval(logger);
        assertThat(lines).hasSize(3);
    }

    @Test
    void preemptionsAndPrefixCacheHitsShowWhenTheyHappen() throws Exception {
        // 6 blocks of 16 tokens for two requests growing to 64 tokens (4 blocks) each: one is preempted.
        StatsLogger logger = start(EngineConfig.builder("m")
                .enablePrefixCaching(true)
                .numKvBlocks(6)
                .build());
        submit(null, 60);
        submit(null, 60);
        nextInterval(logger);
        assertThat(core.snapshot().counters().preemptions()).isPositive();
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0))
                .contains("Preemptions: " + core.snapshot().counters().preemptions() + ", ")
                .contains("Prefix cache hit rate: ")
                .doesNotContain("LoRA");
    }

    @Test
    void aRequestWaitingThroughIntervalsWhereNothingMovesIsStillReported() throws Exception {
        // Its adapter takes 1,000 s to load from storage: it waits, and no counter moves.
        StatsLogger logger = start(
                EngineConfig.builder("m")
                        .enableLora(true)
                        .maxLoras(1)
                        .maxCpuLoras(1)
                        .build(),
                LatencyModel.ofMillis(5, 0.1, 0.2, 0.5, 1_000_000, 3));
        register("slow");
        submit("slow", 40, 4);
        for (int i = 0; i < 3; i++) nextInterval(logger);
        assertThat(lines)
                .hasSize(3)
                .allSatisfy(
                        l -> assertThat(l)
                                .startsWith(
                                        "Avg prompt throughput: 0.0 tokens/s,"
                                                + " Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 1 reqs, GPU KV cache usage: 0.0%"));
    }

    @Test
    void theIntervalIsTheTimeSinceTheLastTick() throws Exception {
        StatsLogger logger = start(
                EngineConfig.builder("m").numKvBlocks(1000).maxModelLen(4096).build());
        submit(null, 100_000);
        nextInterval(logger, 2 * SECOND);
        Counters first = core.snapshot().counters();
        double seconds = nextInterval(logger, 5 * SECOND);
        Counters second = core.snapshot().counters();
        assertThat(seconds).isBetween(5.0, 5.1);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1))
                .contains(String.format(
                        Locale.ROOT,
                        "Avg generation throughput: %.1f tokens/s",
                        (second.generationTokens() - first.generationTokens()) / seconds));
    }

    @Test
    void serveLogsTheLineUnlessToldNotTo() throws Exception {
        assertThat(new picocli.CommandLine(new ServeCommand()).getUsageMessage())
                .contains("--disable-log-stats");
        try (ServerHarness on = new ServerHarness(dir, List.of());
                ServerHarness off = new ServerHarness(dir, List.of(), "--disable-log-stats")) {
            assertThat(on.server.logsStats()).isTrue();
            assertThat(off.server.logsStats()).isFalse();
        }
    }
}
