package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.clock.RealClock;
import dev.patchbay.engine.sched.SchedulerInvariants;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.testkit.Await;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Many threads submitting and aborting against the real engine loop; nothing may leak. */
class ConcurrencyTest {
    @TempDir
    Path dir;

    @Test
    void concurrentSubmitsAndAbortsLeaveNothingBehind() throws Exception {
        EngineConfig config = EngineConfig.builder("sim-test")
                .enableLora(true)
                .maxLoras(3)
                .maxCpuLoras(5)
                .numKvBlocks(256)
                .blockSize(8)
                .maxNumSeqs(32)
                .maxNumBatchedTokens(512)
                .seed(11)
                .build();
        // A small per-step cost keeps requests in flight long enough for aborts to land in every state.
        LatencyModel latency = LatencyModel.ofMillis(0.2, 0.001, 0.002, 0.01, 2, 0.1);
        SimModel model =
                new SimModel("sim-test", SimModel.DEFAULT_CONFIG, latency, SimulatedExecutor.TextMode.RANDOM, 0.05);
        List<String> names = List.of("a", "b", "c", "d", "e", "f", "g", "h");
        try (Engine engine = Engine.start(config, model, RealClock.INSTANCE)) {
            SnapshotInvariants invariants = new SnapshotInvariants(engine.core());
            engine.addListener(invariants);
            SchedulerInvariants schedulerInvariants = SchedulerInvariants.collecting(engine.core());
            for (String n : names)
                engine.core().loadAdapter(n, EngineFixture.writeAdapter(dir, n, n.hashCode()), false, false);

            Map<Long, Boolean> finished = new ConcurrentHashMap<>();
            AtomicInteger duplicateFinishes = new AtomicInteger();
            AtomicInteger accepted = new AtomicInteger();
            int threads = 8, perThread = 150;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long seed = t;
                futures.add(pool.submit(() -> {
                    SplittableRandom rnd = new SplittableRandom(seed);
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        String adapter = rnd.nextInt(5) == 0 ? null : names.get(rnd.nextInt(names.size()));
                        int[] prompt = new int[1 + rnd.nextInt(40)];
                        for (int k = 0; k < prompt.length; k++) prompt[k] = 260 + rnd.nextInt(100);
                        long id = engine.submit(new EngineRequest(
                                prompt,
                                adapter,
                                SamplingParams.fixedLength(1 + rnd.nextInt(30)),
                                RealClock.INSTANCE.nanos(),
                                out -> {
                                    if (out.finished() && finished.put(out.requestId(), true) != null) {
                                        duplicateFinishes.incrementAndGet();
                                    }
                                }));
                        accepted.incrementAndGet();
                        int action = rnd.nextInt(4);
                        if (action == 0) engine.abort(id);
                        else if (action == 1) {
                            // a random short delay (a spin, not a sleep), so aborts land in every request state
                            for (int spin = rnd.nextInt(50_000); spin > 0; spin--) Thread.onSpinWait();
                            engine.abort(id);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures) f.get(60, TimeUnit.SECONDS);
            pool.shutdown();

            Await.until(
                    "every accepted request finished",
                    () -> finished.size() >= accepted.get(),
                    () -> finished.size() + " of " + accepted.get());
            assertThat(finished).hasSize(accepted.get());
            assertThat(duplicateFinishes.get()).isZero();
            // Outputs are delivered before the step's snapshot is published: wait for the snapshot that counts them.
            Await.until(
                    "the last finish in the snapshot",
                    () -> engine.snapshot().counters().finished().total() >= accepted.get());
            EngineSnapshot s = engine.snapshot();
            assertThat(s.numRunning()).isZero();
            assertThat(s.numWaiting()).isZero();
            assertThat(s.kvBlocksUsed()).isZero();
            assertThat(s.counters().finished().total()).isEqualTo(accepted.get());
            assertThat(s.counters().finished().abort()).isPositive();
            assertThat(s.lora().adapters()).allSatisfy(a -> {
                assertThat(a.running()).isZero();
                assertThat(a.waiting()).isZero();
            });
            assertThat(invariants.checked).isGreaterThan(100);
            assertThat(invariants.violations).isEmpty();
            assertThat(schedulerInvariants.steps()).isGreaterThan(100);
            schedulerInvariants.assertHeld();
        }
    }
}
