package dev.patchbay.router.scrape;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** What the router assumes about an endpoint after sending it a request, until the next scrape. */
class EndpointMetricsTest {
    private static final AdapterResidency SLOT = new AdapterResidency(true, false, 8);
    private static final AdapterResidency HOST = new AdapterResidency(false, false, 8);

    @Test
    void aSentRequestWaitsAndTakesAFreeSlot() {
        EndpointMetrics before = EndpointMetrics.builder()
                .waitingRequests(2)
                .runningRequests(5)
                .kvCacheUsage(0.3)
                .slots(3, 1)
                .resident("a", SLOT)
                .adapterRunning("a", 5)
                .resident("b", HOST)
                .build();
        EndpointMetrics after = before.withRequestSent("b").withRequestSent("b").withRequestSent("c");
        assertThat(after.waitingRequests()).isEqualTo(5);
        assertThat(after.runningRequests()).isEqualTo(5);
        assertThat(after.adapterWaiting("b")).isEqualTo(2);
        assertThat(after.adapterWaiting("c")).isEqualTo(1);
        assertThat(after.residency().get("b").inSlot()).isTrue();
        assertThat(after.residency().get("c").inSlot()).isTrue();
        assertThat(after.gpuSlotsUsed()).isEqualTo(3);
        assertThat(after.waitingAdapters()).containsExactlyInAnyOrder("b", "c");
        // Slots full: the next new adapter waits without a slot.
        EndpointMetrics full = after.withRequestSent("d");
        assertThat(full.gpuSlotsUsed()).isEqualTo(3);
        assertThat(full.residency()).doesNotContainKey("d");
        assertThat(full.adapterWaiting("d")).isEqualTo(1);
        // The original is untouched.
        assertThat(before.waitingRequests()).isEqualTo(2);
        assertThat(before.gpuSlotsUsed()).isEqualTo(1);
        assertThat(before.residency().get("b").inSlot()).isFalse();
    }

    @Test
    void slotAdaptersListTheAdaptersInSlotsWithTheirIds() {
        EndpointMetrics m = EndpointMetrics.builder()
                .slots(3, 2)
                .resident("a", SLOT)
                .adapterRunning("a", 1)
                .resident("b", SLOT)
                .resident("h", HOST)
                .build();
        assertThat(m.slotAdapters().names()).containsExactlyInAnyOrder("a", "b");
        assertThat(m.idleEvictableSlot())
                .as("b is in a slot with nothing to do")
                .isTrue();
        int[] ids = m.slotAdapters().ids();
        assertThat(ids).hasSize(2);
        for (int i = 0; i < ids.length; i++) {
            assertThat(ids[i])
                    .isEqualTo(AdapterIds.UNPOOLED.of(m.slotAdapters().names().get(i)));
        }
        // A sent request that takes a free slot shows in the slot adapters at once.
        assertThat(m.withRequestSent("c").slotAdapters().names()).containsExactlyInAnyOrder("a", "b", "c");
        EndpointMetrics.SlotAdapters sentToA = m.withRequestSent("a").slotAdapters();
        assertThat(sentToA.names()).isEqualTo(m.slotAdapters().names());
        assertThat(sentToA.idleEvictable()).isEqualTo(m.slotAdapters().idleEvictable());
    }

    @Test
    void adapterIdsAreStableAndDistinctUnderConcurrentFirstSightings() throws Exception {
        int threads = 8;
        AdapterIds table = new AdapterIds();
        List<String> names =
                IntStream.range(0, 500).mapToObj(i -> "ids-test-" + i).toList();
        var pool = Executors.newFixedThreadPool(threads);
        var start = new CountDownLatch(1);
        List<Future<int[]>> seen = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            seen.add(pool.submit(() -> {
                start.await();
                return names.stream().mapToInt(table::of).toArray();
            }));
        }
        start.countDown();
        int[] first = seen.getFirst().get();
        for (var f : seen) {
            assertThat(f.get()).as("every thread sees the same id per name").containsExactly(first);
        }
        pool.shutdown();
        assertThat(Arrays.stream(first).distinct().count()).isEqualTo(names.size());
        assertThat(table.bound()).isEqualTo(names.size());
        assertThat(table.find("ids-test-never-scraped"))
                .as("a name only asked for gets no id")
                .isEqualTo(-1);
        assertThat(table.bound()).isEqualTo(names.size());
        assertThat(table.find("ids-test-7")).isEqualTo(first[7]);
    }

    @Test
    void eachPoolKeysItsMetricsInItsOwnTable() {
        AdapterIds pool = new AdapterIds();
        EndpointMetrics read = EndpointMetrics.builder()
                .slots(2, 2)
                .resident("x", SLOT)
                .resident("y", SLOT)
                .adapterRunning("x", 1)
                .resident("h", HOST)
                .adapterWaiting("w", 1)
                .build();
        EndpointMetrics keyed = read.inTable(pool);
        assertThat(keyed)
                .isNotEqualTo(read)
                .isEqualTo(EndpointMetrics.builder()
                        .ids(pool)
                        .slots(2, 2)
                        .resident("x", SLOT)
                        .resident("y", SLOT)
                        .adapterRunning("x", 1)
                        .resident("h", HOST)
                        .adapterWaiting("w", 1)
                        .build());
        assertThat(keyed.inTable(pool)).isSameAs(keyed);
        assertThat(pool.bound()).as("every named adapter, no other").isEqualTo(4);
        for (int i = 0; i < keyed.slotAdapters().ids().length; i++) {
            assertThat(keyed.slotAdapters().ids()[i])
                    .isEqualTo(pool.find(keyed.slotAdapters().names().get(i)));
        }
        // The placements computed once per scrape, the same in either table; own requests keep the table.
        for (String a : List.of("x", "y", "h", "w", "never-named")) {
            assertThat(LoraPlacement.of(keyed, a)).as(a).isEqualTo(LoraPlacement.of(read, a));
        }
        assertThat(LoraPlacement.of(keyed, "x")).isEqualTo(LoraPlacement.IN_SLOT);
        assertThat(LoraPlacement.of(keyed, "w")).isEqualTo(LoraPlacement.LOADING);
        // y's idle slot is w's, queued for it first: none is left for h or an adapter never named.
        assertThat(LoraPlacement.of(keyed, "h")).isEqualTo(LoraPlacement.ALL_SLOTS_BUSY);
        assertThat(LoraPlacement.of(keyed, "never-named")).isEqualTo(LoraPlacement.ALL_SLOTS_BUSY);
        assertThat(keyed.withRequestSent("x").placements().table()).isSameAs(pool);
        assertThat(pool.find("never-named")).isEqualTo(-1);
    }

    @Test
    void baseModelAndLegacyOnlyEndpointsOnlyGrowTheQueue() {
        EndpointMetrics legacy = EndpointMetrics.builder()
                .waitingRequests(1)
                .activeAdapters(Set.of("a"))
                .maxLora(2)
                .build();
        EndpointMetrics afterBase = legacy.withRequestSent(null);
        assertThat(afterBase.waitingRequests()).isEqualTo(2);
        assertThat(afterBase.waitingAdapters()).isEmpty();
        EndpointMetrics afterAdapter = legacy.withRequestSent("b");
        assertThat(afterAdapter.waitingAdapters()).containsExactly("b");
        assertThat(afterAdapter.hasResidencyFamilies()).isFalse();
        assertThat(afterAdapter.adapterWaiting()).isEmpty();
    }
}
