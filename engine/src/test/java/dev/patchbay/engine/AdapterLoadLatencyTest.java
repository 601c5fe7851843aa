package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.adapter.AdapterSpec;
import dev.patchbay.engine.clock.RealClock;
import dev.patchbay.engine.exec.LoadedAdapter;
import dev.patchbay.engine.model.Model;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading an adapter from storage happens off the engine loop: other requests keep running meanwhile. */
class AdapterLoadLatencyTest {
    @TempDir
    Path dir;

    @Test
    void slowLoadOnVirtualTimeDoesNotDelayOtherAdapters() throws Exception {
        LatencyModel slowDisk = LatencyModel.ofMillis(5, 0.1, 0.2, 0.5, 5000, 3);
        EngineFixture f = new EngineFixture(
                EngineFixture.config().maxLoras(2).maxCpuLoras(2).build(), slowDisk, TextMode.RANDOM, dir);
        f.load("resident");
        f.register("cold");
        long t0 = f.clock.nanos();
        long cold = f.submit("cold", 16, 10);
        long warm = f.submit("resident", 16, 10);
        long base = f.submit(null, 16, 10);
        f.driver.runToCompletion();
        double warmDone = seconds(f, warm, t0);
        double coldDone = seconds(f, cold, t0);
        assertThat(warmDone).isLessThan(0.2);
        assertThat(seconds(f, base, t0)).isLessThan(0.2);
        assertThat(coldDone).isGreaterThan(5.0).isLessThan(5.3);
    }

    @Test
    void aLoadingAdapterKeepsItsSlotAgainstLaterRequestsOfOtherAdapters() throws Exception {
        LatencyModel slowDisk = LatencyModel.ofMillis(5, 0.1, 0.2, 0.5, 5000, 3);
        EngineFixture f = new EngineFixture(
                EngineFixture.config().maxLoras(2).maxCpuLoras(3).build(), slowDisk, TextMode.RANDOM, dir);
        f.load("busy");
        f.load("later");
        f.register("cold");
        long t0 = f.clock.nanos();
        long busy = f.submit("busy", 16, 2000); // holds one slot for about 20 s
        long cold = f.submit("cold", 16, 10);
        long later = f.submit("later", 16, 10);
        f.driver.runToCompletion();
        // First come, first served across the load: "cold" arrived first and gets the free slot once loaded;
        // "later" waits for a slot instead of taking it while "cold" loads (and keeping it while "busy" runs).
        assertThat(seconds(f, cold, t0)).isGreaterThan(5.0).isLessThan(5.3);
        assertThat(seconds(f, later, t0)).isGreaterThan(seconds(f, cold, t0));
        assertThat(seconds(f, busy, t0)).isGreaterThan(seconds(f, later, t0));
    }

    private static double seconds(EngineFixture f, long id, long t0) {
        return (f.finishNanos.get(id) - t0) / 1e9;
    }

    @Test
    void slowLoadOnRealTimeDoesNotBlockTheLoop() throws Exception {
        CountDownLatch loadMayFinish = new CountDownLatch(1);
        CountDownLatch loadStarted = new CountDownLatch(1);
        SimModel sim = new SimModel("sim-test", SimModel.DEFAULT_CONFIG, LatencyModel.ZERO, TextMode.RANDOM, 0);
        Model blockingLoads = new DelegatingModel(sim) {
            @Override
            public LoadedAdapter loadAdapter(AdapterSpec spec) throws IOException {
                if (spec.name().equals("cold")) {
                    loadStarted.countDown();
                    try {
                        loadMayFinish.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new InterruptedIOException();
                    }
                }
                return super.loadAdapter(spec);
            }
        };
        EngineConfig config = EngineFixture.config().maxLoras(2).maxCpuLoras(2).build();
        try (Engine engine = Engine.start(config, blockingLoads, RealClock.INSTANCE)) {
            engine.loadAdapter("warm", EngineFixture.writeAdapter(dir, "warm", 1), false)
                    .get(10, TimeUnit.SECONDS);
            engine.core().loadAdapter("cold", EngineFixture.writeAdapter(dir, "cold", 2), false, false);
            CountDownLatch coldDone = new CountDownLatch(1);
            CountDownLatch warmDone = new CountDownLatch(20);
            engine.submit(new EngineRequest(new int[] {300, 301}, "cold", SamplingParams.fixedLength(5), 0, o -> {
                if (o.finished()) coldDone.countDown();
            }));
            assertThat(loadStarted.await(10, TimeUnit.SECONDS)).isTrue();
            // While the cold load hangs, twenty requests for the warm adapter and the base model finish.
            for (int i = 0; i < 20; i++) {
                engine.submit(new EngineRequest(
                        new int[] {300, 301}, i % 2 == 0 ? "warm" : null, SamplingParams.fixedLength(5), 0, o -> {
                            if (o.finished()) warmDone.countDown();
                        }));
            }
            assertThat(warmDone.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(coldDone.getCount()).isEqualTo(1);
            loadMayFinish.countDown();
            assertThat(coldDone.await(10, TimeUnit.SECONDS)).isTrue();
        }
    }
}
