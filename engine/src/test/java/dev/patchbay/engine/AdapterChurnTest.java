package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import dev.patchbay.engine.stats.EngineSnapshot;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A randomized churn of 1,000 requests over 50 adapters with 4 slots and 8 host places, on the virtual clock: client
 * aborts at random moments, unloads of adapters with requests in flight, and loads of the same names while they
 * drain. Every step is checked against the scheduler's invariants and every snapshot against the scheduler's sets; at
 * the end every request has exactly one final output, every counter adds up, and every gauge is back to 0.
 */
class AdapterChurnTest {
    private static final int ADAPTERS = 50;
    private static final int REQUESTS = 1000;
    private static final long MS = 1_000_000L;
    private static final long GIVE_UP_NANOS = 60_000 * MS;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void noRequestIsLostAndEveryGaugeReturnsToZero(long seed) throws Exception {
        EngineConfig config = EngineFixture.config()
                .maxLoras(4)
                .maxCpuLoras(8)
                .numKvBlocks(64)
                .blockSize(16)
                .maxNumSeqs(32)
                .maxNumBatchedTokens(256)
                .seed(seed)
                .build();
        EngineFixture f =
                new EngineFixture(config, LatencyModel.ofMillis(1, 0.01, 0.05, 0.1, 5, 1), TextMode.RANDOM, dir);
        SnapshotInvariants invariants = new SnapshotInvariants(f.core);
        f.core.addListener(invariants);
        Map<String, Path> paths = new HashMap<>();
        for (int i = 0; i < ADAPTERS; i++) {
            String name = "c" + i;
            paths.put(name, EngineFixture.writeAdapter(dir, name, i));
            f.core.loadAdapter(name, paths.get(name), false, false).get();
        }

        SplittableRandom rnd = new SplittableRandom(seed);
        Map<Long, Integer> submitted = new HashMap<>();
        int[] refused = new int[1];
        List<CompletableFuture<Void>> unloads = new ArrayList<>();
        int[] reloads = new int[1];
        int[] unloadsInFlight = new int[1];
        long t = 0;
        for (int i = 0; i < REQUESTS; i++) {
            t += (long) (rnd.nextDouble() * 4 * MS);
            String adapter = rnd.nextInt(8) == 0
                    ? null
                    : "c" + Math.min(ADAPTERS - 1, (int) (ADAPTERS * Math.pow(rnd.nextDouble(), 2)));
            int promptTokens = 1 + rnd.nextInt(120);
            int maxTokens = 1 + rnd.nextInt(24);
            boolean disconnects = rnd.nextInt(5) == 0;
            long abortAfter = (long) (rnd.nextDouble() * 60 * MS);
            f.driver.at(t, () -> {
                try {
                    long id = f.submit(adapter, promptTokens, maxTokens);
                    submitted.put(id, maxTokens);
                    if (disconnects) f.driver.at(f.clock.nanos() + abortAfter, () -> f.core.abort(id));
                } catch (RequestRejectedException e) {
                    // Named an adapter that is draining: refused at once, which is an answer.
                    assertThat(e.reason()).isEqualTo(RequestRejectedException.Reason.UNKNOWN_ADAPTER);
                    refused[0]++;
                }
            });
            if (i % 50 == 25) {
                String victim = "c" + rnd.nextInt(ADAPTERS);
                boolean loadNow = rnd.nextBoolean();
                f.driver.at(t, () -> {
                    var current = f.core.adapter(victim);
                    if (current != null && current.inFlight()) unloadsInFlight[0]++;
                    try {
                        unloads.add(f.core.unloadAdapter(victim));
                    } catch (AdapterException e) {
                        return; // unloaded earlier and not back yet
                    }
                    reload(f, victim, paths.get(victim), loadNow, reloads);
                });
            }
        }
        f.driver.runToCompletion();

        assertThat(invariants.violations).isEmpty();
        long batches = f.snapshots.stream().filter(x -> x.lastStep().ranBatch()).count();
        assertThat(f.schedulerInvariants.steps())
                .as("steps checked")
                .isGreaterThanOrEqualTo(batches)
                .isPositive();
        assertThat(submitted.size() + refused[0]).isEqualTo(REQUESTS);
        for (long id : submitted.keySet()) {
            List<RequestOutput> outs = f.outputs.get(id);
            assertThat(outs.stream().filter(RequestOutput::finished).count())
                    .as("final outputs of request %d", id)
                    .isEqualTo(1);
            assertThat(outs.get(outs.size() - 1).finished()).isTrue();
            RequestOutput last = f.last(id);
            if (last.finishReason() == FinishReason.LENGTH)
                assertThat(f.tokens(id)).isEqualTo(submitted.get(id));
            assertThat(last.finishReason()).isIn(FinishReason.LENGTH, FinishReason.ABORT);
        }
        assertThat(unloads).allMatch(CompletableFuture::isDone);
        assertThat(reloads[0]).isEqualTo(unloads.size());
        EngineSnapshot s = f.latest();
        assertThat(s.numRunning()).isZero();
        assertThat(s.numWaiting()).isZero();
        assertThat(s.kvBlocksUsed()).isZero();
        assertThat(f.core.activeRequests()).isEmpty();
        assertThat(s.lora().adapters()).allSatisfy(a -> {
            assertThat(a.running()).isZero();
            assertThat(a.waiting()).isZero();
        });
        assertThat(s.lora().runningAdapters()).isEmpty();
        assertThat(s.lora().waitingAdapters()).isEmpty();
        assertThat(s.counters().finished().total()).isEqualTo(submitted.size());
        assertThat(f.core.adapters()).hasSize(ADAPTERS);
        // The workload reached the states it is meant to churn through.
        assertThat(unloadsInFlight[0]).as("unloads with requests in flight").isPositive();
        assertThat(s.counters().finished().abort()).as("client aborts").isPositive();
        assertThat(s.counters().preemptions()).as("preemptions").isPositive();
        assertThat(s.counters().lora().evictions().cpu()).as("host evictions").isPositive();
    }

    /**
     * Loads the name again; while the old adapter drains that is a conflict, so it retries a little later (for at most
     * a virtual minute: an unload that never completes fails the test instead of retrying forever).
     */
    private static void reload(EngineFixture f, String name, Path path, boolean loadNow, int[] reloads) {
        if (f.clock.nanos() > GIVE_UP_NANOS) return;
        try {
            f.core.loadAdapter(name, path, false, loadNow);
            reloads[0]++;
        } catch (AdapterException e) {
            assertThat(e.kind()).isEqualTo(AdapterException.Kind.CONFLICT);
            f.driver.at(f.clock.nanos() + 2 * MS, () -> reload(f, name, path, loadNow, reloads));
        }
    }
}
