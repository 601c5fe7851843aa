package dev.patchbay.bench.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.EngineRequest;
import dev.patchbay.engine.RequestRejectedException;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.clock.VirtualClock;
import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor;
import dev.patchbay.engine.sim.VirtualEngineDriver;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.metrics.EngineMetrics;
import dev.patchbay.metrics.MetricsOptions;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.prom.MalformedPageException;
import dev.patchbay.router.scrape.EndpointMetrics;
import dev.patchbay.router.scrape.EndpointMetricsReader;
import dev.patchbay.router.scrape.MetricFamilies;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The simulator's shortcut ({@link SnapshotScrape}) gives the router exactly what rendering the /metrics page with the
 * metrics module and parsing it with the router's reader gives: snapshot by snapshot over random workloads, and whole
 * fleet runs, which come out identical on either path.
 */
class ScrapePathTest {
    private static final long MS = 1_000_000L;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void theShortcutEqualsRenderingAndParsingThePage(long seed) throws Exception {
        SplittableRandom rnd = new SplittableRandom(seed);
        int maxLoras = 1 + rnd.nextInt(4);
        EngineConfig config = EngineConfig.builder("sim")
                .enableLora(true)
                .maxLoras(maxLoras)
                .maxCpuLoras(maxLoras + rnd.nextInt(4))
                .numKvBlocks(64 + rnd.nextInt(200))
                .maxNumSeqs(16)
                .seed(seed)
                .build();
        VirtualClock clock = new VirtualClock();
        SimModel model = new SimModel(
                "sim", SimModel.DEFAULT_CONFIG, LatencyModel.DEFAULT, SimulatedExecutor.TextMode.RANDOM, 0);
        EngineCore core = new EngineCore(config, model, clock, null, () -> {});
        VirtualEngineDriver driver = new VirtualEngineDriver(core, clock);
        EngineSnapshot[] current = new EngineSnapshot[1];
        EngineMetrics metrics = new EngineMetrics(MetricsOptions.of(config), () -> current[0]);
        EndpointMetricsReader reader = new EndpointMetricsReader();
        List<String> mismatches = new ArrayList<>();
        int[] compared = new int[1];
        core.addListener(s -> {
            current[0] = s;
            metrics.accept(s);
            String page = new String(
                    metrics.scrape(MetricFamilies.ALL_SET, "text/plain;version=0.0.4")
                            .body(),
                    StandardCharsets.UTF_8);
            EndpointMetrics parsed;
            try {
                parsed = reader.read(page);
            } catch (MalformedPageException e) {
                throw new AssertionError("the rendered page does not parse", e);
            }
            EndpointMetrics shortcut = SnapshotScrape.read(s, SnapshotScrape.View.RESIDENCY);
            compared[0]++;
            if (!parsed.equals(shortcut) && mismatches.size() < 3) {
                mismatches.add("snapshot " + s.sequence() + ":\n  page     " + parsed + "\n  shortcut " + shortcut);
            }
        });
        int adapters = 3 + rnd.nextInt(12);
        Path adapter =
                PeftWriter.write(dir.resolve("lora"), SimModel.DEFAULT_CONFIG, "sim", 8, 16, List.of("q_proj"), 1);
        for (int i = 0; i < adapters; i++)
            core.loadAdapter("a" + i, adapter, rnd.nextInt(10) == 0 && i < maxLoras - 1, false);
        long t = 0;
        for (int i = 0; i < 300; i++) {
            t += (long) (rnd.nextDouble() * 20 * MS);
            String name = rnd.nextInt(6) == 0 ? null : "a" + rnd.nextInt(adapters);
            int[] prompt = new int[1 + rnd.nextInt(300)];
            int output = 1 + rnd.nextInt(100);
            boolean abort = rnd.nextInt(8) == 0;
            long abortAfter = (long) (rnd.nextDouble() * 200 * MS);
            driver.at(t, () -> {
                try {
                    long id = core.submit(new EngineRequest(
                            prompt, name, SamplingParams.fixedLength(output), clock.nanos(), out -> {}));
                    if (abort) driver.at(clock.nanos() + abortAfter, () -> core.abort(id));
                } catch (RequestRejectedException e) {
                    throw new AssertionError(e);
                }
            });
        }
        driver.runToCompletion();
        assertThat(compared[0]).isGreaterThan(300);
        assertThat(mismatches).isEmpty();
    }

    @Test
    void aFleetRunGivesTheSameNumbersOnEitherPath() {
        SimSettings s = SimSettings.defaults(Workload.gieMultilora().withSizing(null, null, 3), 20_000 * MS);
        Trace trace = Trace.generate(
                s.workload(), 30, s.durationNanos(), Arrivals.POISSON, Trace.Lengths.SHAREGPT_LIKE, s.maxModelLen(), 9);
        for (String policy : List.of(Profiles.GIE_LORA, Profiles.PATCHBAY)) {
            RunResult text, snapshot;
            try (FleetSimulator sim = new FleetSimulator(s, FleetSimulator.ScrapePath.TEXT)) {
                text = sim.run(policy, trace, 30, 9, f -> {});
            }
            try (FleetSimulator sim = new FleetSimulator(s, FleetSimulator.ScrapePath.SNAPSHOT)) {
                snapshot = sim.run(policy, trace, 30, 9, f -> {});
            }
            assertThat(text.completed()).as(policy).isEqualTo(trace.size());
            assertThat(snapshot.withoutWallTime()).as(policy).isEqualTo(text.withoutWallTime());
        }
    }
}
