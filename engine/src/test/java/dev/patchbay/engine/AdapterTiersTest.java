package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AdapterTiersTest {
    @TempDir
    Path dir;

    private EngineFixture fixture(int maxLoras, int maxCpuLoras) {
        return new EngineFixture(
                EngineFixture.config()
                        .maxLoras(maxLoras)
                        .maxCpuLoras(maxCpuLoras)
                        .build(),
                LatencyModel.DEFAULT,
                TextMode.RANDOM,
                dir);
    }

    private static List<String> names(List<RegisteredAdapter> l) {
        return l.stream().map(RegisteredAdapter::name).toList();
    }

    private static AdapterState state(EngineSnapshot s, String name) {
        return s.lora().adapters().stream()
                .filter(a -> a.name().equals(name))
                .findFirst()
                .orElse(null);
    }

    private void runOne(EngineFixture f, String adapter) throws Exception {
        long id = f.submit(adapter, 4, 2);
        f.driver.runToCompletion();
        assertThat(f.finished(id)).isTrue();
    }

    @Test
    void maxCpuLorasBelowMaxLorasIsRefused() {
        assertThatThrownBy(
                        () -> EngineFixture.config().maxLoras(4).maxCpuLoras(2).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("max_cpu_loras (2) must be >= max_loras (4)");
    }

    @Test
    void illegalRankIsRefused() {
        assertThatThrownBy(() -> EngineFixture.config().maxLoraRank(12).build())
                .hasMessageContaining("max_lora_rank must be one of");
    }

    @Test
    void slotsAreLeastRecentlyUsed() throws Exception {
        EngineFixture f = fixture(2, 4);
        for (String n : List.of("a", "b", "c")) f.load(n);
        runOne(f, "a");
        runOne(f, "b");
        assertThat(names(f.core.adapterRegistry().slotOrder())).containsExactly("a", "b");
        runOne(f, "a"); // touch a: b becomes least recently used
        assertThat(names(f.core.adapterRegistry().slotOrder())).containsExactly("b", "a");
        runOne(f, "c"); // evicts b, the LRU slot
        assertThat(names(f.core.adapterRegistry().slotOrder())).containsExactly("a", "c");
        EngineSnapshot s = f.latest();
        assertThat(state(s, "b").level()).isEqualTo(Level.CPU);
        assertThat(state(s, "c").level()).isEqualTo(Level.GPU);
        assertThat(s.counters().lora().evictions().gpu()).isEqualTo(1);
        // Idle adapters stay resident: residency is LRU only, as in vLLM.
        assertThat(s.lora().slotsUsed()).isEqualTo(2);
        assertThat(s.lora().hostOnly()).isEqualTo(1);
    }

    @Test
    void hostMemoryIsLeastRecentlyUsedAndLoadsAreTimed() throws Exception {
        EngineFixture f = fixture(1, 2);
        for (String n : List.of("a", "b", "c")) f.register(n);
        runOne(f, "a");
        runOne(f, "b");
        assertThat(names(f.core.adapterRegistry().hostOrder())).containsExactly("a", "b");
        runOne(f, "a");
        assertThat(names(f.core.adapterRegistry().hostOrder())).containsExactly("b", "a");
        runOne(f, "c"); // host holds 2: b, the least recently used, leaves
        assertThat(names(f.core.adapterRegistry().hostOrder())).containsExactly("a", "c");
        EngineSnapshot s = f.latest();
        assertThat(state(s, "b")).isNull(); // gone from both tiers and idle: no series
        assertThat(s.counters().lora().loads().disk()).isEqualTo(3);
        assertThat(s.counters().lora().evictions().cpu()).isEqualTo(1);
        // Every disk load took the modeled 80 ms on the virtual clock.
        List<AdapterLoad> diskLoads = f.snapshots.stream()
                .flatMap(x -> x.lastStep().loads().stream())
                .filter(l -> l.source() == AdapterLoad.Source.DISK)
                .toList();
        assertThat(diskLoads).hasSize(3).allSatisfy(l -> assertThat(l.seconds()).isEqualTo(0.080));
        assertThat(s.counters().lora().lookups().cpu()).isEqualTo(4);
        assertThat(s.counters().lora().hits().cpu()).isEqualTo(1);
    }

    @Test
    void pinnedAdaptersAreNeverEvicted() throws Exception {
        EngineFixture f = fixture(1, 2);
        CompletableFuture<RegisteredAdapter> pinned =
                f.core.loadAdapter("p", EngineFixture.writeAdapter(dir, "p", 1), true, true);
        f.driver.runToCompletion();
        assertThat(pinned.get().pinned()).isTrue();
        for (String n : List.of("a", "b", "c")) f.register(n);
        for (String n : List.of("a", "b", "c", "a")) runOne(f, n);
        assertThat(names(f.core.adapterRegistry().hostOrder())).contains("p");
        assertThat(state(f.latest(), "p").pinned()).isTrue();
    }

    @Test
    void pinsLeaveOneHostPlaceFree() throws Exception {
        EngineFixture f = fixture(1, 2);
        f.core.loadAdapter("p", EngineFixture.writeAdapter(dir, "p", 1), true, true);
        assertThatThrownBy(() -> f.core.loadAdapter("q", EngineFixture.writeAdapter(dir, "q", 2), true, true))
                .isInstanceOf(AdapterException.class)
                .hasMessage("Cannot pin 'q': at most max_cpu_loras - 1 = 1 adapters can be pinned");
        assertThat(f.core.adapter("q")).isNull();
    }

    @Test
    void adapterInUseByTheStepIsNeverEvicted() throws Exception {
        EngineFixture f = fixture(1, 1);
        f.register("a");
        f.register("b");
        long a = f.submit("a", 4, 30);
        long b = f.submit("b", 4, 5);
        for (int i = 0; i < 200 && f.core.runningIds().isEmpty(); i++) f.driver.runUntil(f.clock.nanos() + 5_000_000);
        assertThat(f.core.runningIds()).containsExactly(a);
        // b's load must wait: the only host place holds a, which is running.
        for (int i = 0; i < 10; i++) f.step();
        assertThat(state(f.latest(), "a").level()).isEqualTo(Level.GPU);
        assertThat(f.finished(b)).isFalse();
        f.driver.runToCompletion();
        assertThat(f.finished(a)).isTrue();
        assertThat(f.finished(b)).isTrue();
        assertThat(f.tokens(a)).isEqualTo(30);
        // a finished its 30 tokens before b could be loaded.
        long aEnd = f.outputs.get(a).size();
        assertThat(aEnd).isPositive();
    }

    @Test
    void everyAdapterWithRunningRequestsIsInASlot() throws Exception {
        EngineFixture f = fixture(2, 3);
        for (String n : List.of("a", "b", "c", "d")) f.register(n);
        for (int i = 0; i < 40; i++) f.submit(List.of("a", "b", "c", "d").get(i % 4), 4 + i % 7, 3 + i % 5);
        f.driver.runToCompletion();
        for (EngineSnapshot s : f.snapshots) {
            for (AdapterState a : s.lora().adapters()) {
                if (a.running() > 0) assertThat(a.level()).isEqualTo(Level.GPU);
            }
            assertThat(s.lora().slotsUsed()).isLessThanOrEqualTo(2);
        }
    }

    @Test
    void unloadRefusesNewRequestsLetsInFlightFinishThenFrees() throws Exception {
        EngineFixture f = fixture(1, 2);
        f.load("a");
        long running = f.submit("a", 4, 20);
        long queued = f.submit("a", 4, 20);
        f.step();
        CompletableFuture<Void> done = f.core.unloadAdapter("a");
        assertThatThrownBy(() -> f.submit("a", 4, 2))
                .isInstanceOf(RequestRejectedException.class)
                .extracting(e -> ((RequestRejectedException) e).reason())
                .isEqualTo(RequestRejectedException.Reason.UNKNOWN_ADAPTER);
        assertThatThrownBy(() -> f.core.unloadAdapter("a"))
                .isInstanceOf(AdapterException.class)
                .hasMessage("The lora adapter 'a' cannot be found.");
        f.step();
        assertThat(done).isNotDone();
        f.driver.runToCompletion();
        assertThat(done).isDone();
        assertThat(f.last(running).finishReason()).isEqualTo(FinishReason.LENGTH);
        assertThat(f.last(queued).outputTokens()).isEqualTo(20);
        assertThat(f.core.adapterRegistry().hostOrder()).isEmpty();
        assertThat(f.latest().lora().adapters()).isEmpty();
        // The name is free again.
        f.load("a");
        assertThat(f.core.adapter("a")).isNotNull();
    }

    @Test
    void unloadWhileTheLoadForAWaitingRequestRunsStillServesThatRequest() throws Exception {
        EngineFixture f = fixture(1, 2);
        f.register("a");
        long waiting = f.submit("a", 4, 5);
        f.step(); // accepts the request and starts the load from storage
        assertThat(f.core.adapter("a").loading()).isTrue();
        CompletableFuture<Void> done = f.core.unloadAdapter("a");
        f.driver.runToCompletion();
        assertThat(f.finished(waiting))
                .as("the request admitted before the unload gets its answer")
                .isTrue();
        assertThat(f.last(waiting).finishReason()).isEqualTo(FinishReason.LENGTH);
        assertThat(done).isDone();
        assertThat(f.core.adapterRegistry().hostOrder()).isEmpty();
    }

    @Test
    void unloadOfAnAdapterEvictedFromHostMemoryReloadsItForItsWaitingRequests() throws Exception {
        EngineFixture f = fixture(1, 1);
        f.load("a");
        f.register("b");
        long hog = f.submit("b", 4, 30);
        f.driver.runUntil(f.clock.nanos() + 1_000_000_000L);
        assertThat(f.core.adapterRegistry().hostOrder())
                .extracting(x -> x.name())
                .containsExactly("b");
        long late = f.submit("a", 4, 3); // a was evicted for b; it waits for host room
        f.step();
        CompletableFuture<Void> done = f.core.unloadAdapter("a");
        f.driver.runToCompletion();
        assertThat(f.finished(hog)).isTrue();
        assertThat(f.finished(late)).isTrue();
        assertThat(f.last(late).finishReason()).isEqualTo(FinishReason.LENGTH);
        assertThat(done).isDone();
        assertThat(f.core.adapterRegistry().hostOrder())
                .extracting(x -> x.name())
                .doesNotContain("a");
    }

    @Test
    void loadingTheSameNameTwiceIsAConflict() throws Exception {
        EngineFixture f = fixture(1, 1);
        f.load("a");
        assertThatThrownBy(() -> f.load("a"))
                .isInstanceOf(AdapterException.class)
                .hasMessage("The lora adapter 'a' has already been loaded.");
    }
}
