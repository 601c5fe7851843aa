package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import dev.patchbay.engine.stats.EngineSnapshot;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** On the virtual clock the same seed gives the same trace, event for event. */
class DeterminismTest {
    @TempDir
    Path dir;

    private List<String> trace(long seed, Path root) throws Exception {
        EngineFixture f = new EngineFixture(
                EngineFixture.config()
                        .maxLoras(2)
                        .maxCpuLoras(3)
                        .numKvBlocks(96)
                        .blockSize(8)
                        .seed(seed)
                        .build(),
                LatencyModel.DEFAULT,
                TextMode.RANDOM,
                root);
        List<String> adapters = List.of("a", "b", "c", "d", "e");
        for (String a : adapters) f.register(a);
        SplittableRandom rnd = new SplittableRandom(seed);
        List<long[]> ids = new ArrayList<>();
        long t = 0;
        for (int i = 0; i < 120; i++) {
            t += (long) (-Math.log(1 - rnd.nextDouble()) * 20_000_000); // Poisson arrivals, 50/s
            String adapter = rnd.nextInt(6) == 0 ? null : adapters.get(rnd.nextInt(adapters.size()));
            int prompt = 1 + rnd.nextInt(120);
            int out = 1 + rnd.nextInt(60);
            boolean abort = rnd.nextInt(15) == 0;
            long at = t;
            f.driver.at(at, () -> {
                try {
                    long id = f.submit(adapter, prompt, out);
                    ids.add(new long[] {id});
                    if (abort) f.driver.at(at + 30_000_000, () -> f.core.abort(id));
                } catch (RequestRejectedException e) {
                    throw new AssertionError(e);
                }
            });
        }
        f.driver.runToCompletion();
        List<String> trace = new ArrayList<>();
        for (EngineSnapshot s : f.snapshots) trace.add(s.toString());
        for (long[] id : ids) {
            trace.add(id[0] + " " + f.finishNanos.get(id[0]) + " "
                    + f.outputs.get(id[0]).stream()
                            .map(o -> Arrays.toString(o.newTokenIds()) + o.finishReason())
                            .toList());
        }
        assertThat(ids).hasSize(120);
        assertThat(f.latest().numRunning() + f.latest().numWaiting()).isZero();
        return trace;
    }

    @Test
    void sameSeedSameTrace() throws Exception {
        List<String> first = trace(42, dir.resolve("one"));
        List<String> second = trace(42, dir.resolve("two"));
        assertThat(first).hasSizeGreaterThan(500);
        assertThat(second).isEqualTo(first);
        assertThat(trace(43, dir.resolve("three"))).isNotEqualTo(first);
    }
}
