package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.clock.RealClock;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.testkit.Await;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request counts as waiting from its submit, not from the end of the step that first schedules it: the snapshot
 * read between two steps adds the requests no published snapshot shows yet, and never counts one twice.
 */
class UnshownArrivalsTest {
    @TempDir
    Path dir;

    private static Optional<AdapterState> adapter(EngineSnapshot s, String name) {
        return s.lora().adapters().stream().filter(a -> a.name().equals(name)).findFirst();
    }

    @Test
    void aRequestShowsAsWaitingFromItsSubmit() throws Exception {
        EngineFixture f = new EngineFixture(
                EngineFixture.config().build(), LatencyModel.ZERO, SimulatedExecutor.TextMode.RANDOM, dir);
        f.register("a");
        f.step();
        EngineSnapshot published = f.snapshots.getLast();
        assertThat(adapter(published, "a")).isEmpty();

        f.submit("a", 8, 4);
        f.submit(null, 8, 4);

        EngineSnapshot read = f.core.snapshot();
        assertThat(read.numWaiting()).isEqualTo(published.numWaiting() + 2);
        assertThat(read.tokensWaiting()).as("both prompts, to prefill").isEqualTo(published.tokensWaiting() + 16);
        assertThat(read.lora().waitingAdapters()).contains("a");
        assertThat(adapter(read, "a")).hasValueSatisfying(a -> {
            assertThat(a.waiting()).isEqualTo(1);
            assertThat(a.level()).isEqualTo(AdapterState.Level.NONE);
        });
        assertThat(f.snapshots.getLast()).isSameAs(published); // listeners get published snapshots only

        f.step(); // takes both in: the snapshot it publishes shows them, and nothing is added to it any more
        EngineSnapshot next = f.snapshots.getLast();
        assertThat(f.core.snapshot()).isSameAs(next);
        assertThat(next.numWaiting() + next.numRunning()).isEqualTo(2);
        AdapterState a = adapter(next, "a").orElseThrow();
        assertThat(a.waiting() + a.running()).isEqualTo(1);
        // The base request's prompt is prefilled (it has its first token); a waiting one's is still to do.
        assertThat(next.tokensWaiting()).isEqualTo(8L * next.numWaiting());
    }

    @Test
    void anAdapterListedAgainForAnArrivalKeepsItsTotals() throws Exception {
        EngineFixture f = new EngineFixture(
                EngineFixture.config().maxLoras(1).maxCpuLoras(1).build(),
                LatencyModel.ZERO,
                SimulatedExecutor.TextMode.RANDOM,
                dir);
        f.load("a");
        long first = f.submit("a", 8, 3);
        while (!f.finished(first)) f.step();
        f.step();
        AdapterState before = adapter(f.snapshots.getLast(), "a").orElseThrow();
        assertThat(before.finished().total()).isEqualTo(1);
        f.load("b"); // the host tier holds one adapter: "a" leaves it and the snapshot's list
        assertThat(adapter(f.snapshots.getLast(), "a")).isEmpty();

        f.submit("a", 8, 3);

        AdapterState read = adapter(f.core.snapshot(), "a").orElseThrow();
        assertThat(read.waiting()).isEqualTo(1);
        assertThat(read.finished()).isEqualTo(before.finished());
        assertThat(read.promptTokens()).isEqualTo(before.promptTokens());
        assertThat(read.generationTokens()).isEqualTo(before.generationTokens());
    }

    /**
     * One submitter per adapter, so at most one of its requests is between "started" and the engine's count; a reader
     * checks every snapshot it reads against the requests started: a request counted twice (once as not shown, once
     * in the snapshot that shows it) would pass that bound whenever no request of the adapter is in between.
     */
    @Test
    void concurrentSubmitsAreNeverCountedTwice() throws Exception {
        EngineConfig config = EngineConfig.builder("sim-test")
                .enableLora(true)
                .maxLoras(2)
                .maxCpuLoras(4)
                .numKvBlocks(256)
                .blockSize(8)
                .maxNumSeqs(16)
                .seed(3)
                .build();
        LatencyModel latency = LatencyModel.ofMillis(0.2, 0.001, 0.002, 0.01, 2, 0.1);
        SimModel model =
                new SimModel("sim-test", SimModel.DEFAULT_CONFIG, latency, SimulatedExecutor.TextMode.RANDOM, 0.0);
        List<String> names = List.of("a", "b", "c", "d");
        try (Engine engine = Engine.start(config, model, RealClock.INSTANCE)) {
            for (String n : names)
                engine.core().loadAdapter(n, EngineFixture.writeAdapter(dir, n, n.hashCode()), false, false);
            AtomicIntegerArray started = new AtomicIntegerArray(names.size());
            AtomicInteger finished = new AtomicInteger();
            AtomicBoolean submitting = new AtomicBoolean(true);
            ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
            AtomicInteger reads = new AtomicInteger();
            int perAdapter = 300;
            ExecutorService pool = Executors.newFixedThreadPool(names.size() + 1);
            List<Future<?>> submitters = new ArrayList<>();
            for (int k = 0; k < names.size(); k++) {
                int index = k;
                submitters.add(pool.submit(() -> {
                    for (int i = 0; i < perAdapter; i++) {
                        started.incrementAndGet(index);
                        engine.submit(new EngineRequest(
                                new int[] {300, 301, 302},
                                names.get(index),
                                SamplingParams.fixedLength(1 + i % 5),
                                RealClock.INSTANCE.nanos(),
                                out -> {
                                    if (out.finished()) finished.incrementAndGet();
                                }));
                    }
                    return null;
                }));
            }
            Future<?> reader = pool.submit(() -> {
                while (submitting.get()) {
                    EngineSnapshot s = engine.core().snapshot();
                    reads.incrementAndGet();
                    for (AdapterState a : s.lora().adapters()) {
                        int index = names.indexOf(a.name());
                        long counted = a.running() + a.waiting() + a.finished().total();
                        if (counted > started.get(index)) {
                            violations.add(a.name() + " counts " + counted + " of " + started.get(index) + " started");
                        }
                    }
                }
                return null;
            });
            for (Future<?> s : submitters) s.get(60, TimeUnit.SECONDS);
            int total = names.size() * perAdapter;
            Await.until("every request finished", () -> finished.get() >= total, () -> finished + " of " + total);
            submitting.set(false);
            reader.get(60, TimeUnit.SECONDS);
            pool.shutdown();

            assertThat(violations).isEmpty();
            assertThat(reads.get()).isPositive();
            Await.until(
                    "the last finish in the snapshot",
                    () -> engine.snapshot().counters().finished().total() >= total);
            EngineSnapshot s = engine.snapshot();
            assertThat(s.numWaiting()).isZero();
            assertThat(s.lora().adapters())
                    .allSatisfy(a -> assertThat(a.waiting()).isZero());
        }
    }
}
