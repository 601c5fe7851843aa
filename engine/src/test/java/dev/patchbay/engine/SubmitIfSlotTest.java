package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.engine.RequestRejectedException.Reason;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimulatedExecutor;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.FinishCounts;
import dev.patchbay.engine.stats.LoraState;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A request that asks for a batch slot at once gets one, joins its adapter's requests, or is refused. */
class SubmitIfSlotTest {
    @TempDir
    Path dir;

    private static AdapterState adapter(String name, Level level, int running, int waiting, boolean pinned) {
        return new AdapterState(
                name, name.hashCode(), running, waiting, level, false, pinned, 8, 0, 0, 0, FinishCounts.ZERO);
    }

    private static LoraState twoSlots(AdapterState... adapters) {
        int inSlots = (int)
                List.of(adapters).stream().filter(a -> a.level() == Level.GPU).count();
        return new LoraState(2, 8, 16, "bf16", List.of(adapters), inSlots, 0, List.of(), List.of(), 0);
    }

    @Test
    void aSlotIsFreeHeldByAnIdleAdapterOrNotToBeHad() {
        AdapterState busy = adapter("busy", Level.GPU, 1, 0, false);
        assertThat(twoSlots(busy).hasSlotFor("new")).as("one slot free").isTrue();
        assertThat(twoSlots(busy, adapter("idle", Level.GPU, 0, 0, false)).hasSlotFor("new"))
                .as("the idle adapter's slot")
                .isTrue();
        assertThat(twoSlots(busy, adapter("pinned", Level.GPU, 0, 0, true)).hasSlotFor("new"))
                .as("a pinned adapter keeps its slot")
                .isFalse();
        LoraState queued =
                twoSlots(busy, adapter("idle", Level.GPU, 0, 0, false), adapter("queued", Level.CPU, 0, 2, false));
        assertThat(queued.hasSlotFor("new"))
                .as("the adapter queued first takes the idle slot")
                .isFalse();
        assertThat(queued.hasSlotFor("queued")).as("joins its waiting requests").isTrue();
        assertThat(queued.hasSlotFor("busy")).as("in a slot").isTrue();
    }

    @Test
    void theEngineRefusesOnlyWhatCannotHaveASlot() throws Exception {
        EngineFixture f = oneSlot(4);
        f.load("a");
        f.load("b");
        f.load("c");
        long first = f.submit("a", 8, 2);
        f.step();

        assertThatThrownBy(() -> f.core.submitIfSlot(request("b")))
                .isInstanceOfSatisfying(
                        RequestRejectedException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.NO_SLOT))
                .hasMessageContaining("'b'");
        f.core.submitIfSlot(request("a")); // its adapter is in the slot
        f.core.submitIfSlot(request(null)); // the base model needs none
        assertThatThrownBy(() -> f.core.submitIfSlot(request("missing")))
                .isInstanceOfSatisfying(
                        RequestRejectedException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_ADAPTER));

        while (f.core.hasRequests()) f.step();
        assertThat(f.finished(first)).isTrue();
        f.core.submitIfSlot(request("b")); // "a" is idle now: its slot can be had
        assertThatThrownBy(() -> f.core.submitIfSlot(request("c")))
                .as("before any step: the request for b, not yet scheduled, has claimed the slot")
                .isInstanceOfSatisfying(
                        RequestRejectedException.class,
                        e -> assertThat(e.reason()).isEqualTo(Reason.NO_SLOT));
    }

    @Test
    void concurrentRequestsForOneFreeSlotGetItOnce() throws Exception {
        EngineFixture f = oneSlot(8);
        List<String> names = List.of("a", "b", "c", "d", "e", "f", "g", "h");
        for (String n : names) f.load(n);
        String inSlot = null;
        for (int round = 0; round < 20; round++) {
            // Every adapter but the one in the slot (idle now, so the slot can be had once): one of them gets it.
            List<String> contenders = new ArrayList<>(names);
            contenders.remove(inSlot);
            CountDownLatch start = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(contenders.size());
            List<Future<String>> outcomes = new ArrayList<>();
            for (String n : contenders) {
                outcomes.add(pool.submit(() -> {
                    start.await();
                    try {
                        f.core.submitIfSlot(request(n));
                        return n;
                    } catch (RequestRejectedException e) {
                        assertThat(e.reason()).isEqualTo(Reason.NO_SLOT);
                        return null;
                    }
                }));
            }
            start.countDown();
            List<String> winners = new ArrayList<>();
            for (Future<String> o : outcomes) {
                String winner = o.get(30, TimeUnit.SECONDS);
                if (winner != null) winners.add(winner);
            }
            pool.shutdown();
            assertThat(winners).as("round " + round).hasSize(1);
            inSlot = winners.getFirst();
            while (f.core.hasRequests()) f.step(); // it runs in the slot, finishes, and leaves the slot idle
        }
    }

    /** An engine with one batch slot and {@code hostPlaces} adapters' room in host memory, steps free of cost. */
    private EngineFixture oneSlot(int hostPlaces) {
        return new EngineFixture(
                EngineFixture.config().maxLoras(1).maxCpuLoras(hostPlaces).build(),
                LatencyModel.ZERO,
                SimulatedExecutor.TextMode.RANDOM,
                dir);
    }

    private static EngineRequest request(String adapter) {
        return new EngineRequest(new int[] {300, 301}, adapter, SamplingParams.fixedLength(2), 0, out -> {});
    }
}
