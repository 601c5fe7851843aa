package dev.patchbay.router.pick;

import static dev.patchbay.router.pick.Fixtures.ports;
import static dev.patchbay.router.pick.Fixtures.send;
import static dev.patchbay.router.pick.Fixtures.state;
import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LoraSpreadFilterTest {
    private static final AdapterResidency SLOT = new AdapterResidency(true, false, 8);
    private final AtomicLong clock = new AtomicLong();
    private final LoraSpreadFilter filter =
            new LoraSpreadFilter(clock::get, new LoraSpreadFilter.Settings(8, 60_000_000_000L, 30_000_000_000L, 0));

    /** Three slots, all held; each adapter given as name=running. */
    private static EndpointState busy(int port, int waiting, Map<String, Integer> running) {
        EndpointMetrics.Builder b =
                EndpointMetrics.builder().waitingRequests(waiting).slots(3, running.size());
        running.forEach((name, n) -> {
            b.resident(name, SLOT);
            b.adapterRunning(name, n);
        });
        return state(port, b.build());
    }

    /** Port 1 is the only holder of "hot" and has a long queue; every slot in the pool is busy. */
    private static List<EndpointState> frozenPool() {
        return List.of(
                busy(1, 40, Map.of("hot", 250, "a", 3, "b", 3)),
                busy(2, 0, Map.of("c", 60, "d", 30, "e", 20)),
                busy(3, 1, Map.of("f", 50, "a", 2, "g", 40)));
    }

    @Test
    void drainsTheSlotThatFreesSoonestOnAnEndpointWithAShortQueue() {
        List<EndpointState> pool = frozenPool();
        assertThat(ports(filter.filter(PickRequest.adapter("hot"), pool)))
                .as("a pick sees the drain it would start")
                .containsExactly(1, 2, 3);
        assertThat(filter.drains()).as("but only a request sent starts it").isEmpty();
        assertThat(ports(send(filter, PickRequest.adapter("hot"), pool))).containsExactly(1, 2, 3);
        // Port 3's "a" is held elsewhere too (port 1) and has the fewest requests: its slot frees soonest.
        assertThat(filter.drains()).containsExactly(Map.entry(pool.get(2).endpoint(), "a"));
        // While it drains: "a" goes elsewhere, "hot" may go there, adapters needing a new slot may not,
        // and adapters already in a slot there still may. ("a" is picked for, not sent: its only home left is port 1,
        // with 40 waiting, and a send would start a drain for it on port 2, as the next test shows.)
        assertThat(ports(filter.filter(PickRequest.adapter("a"), pool))).containsExactly(1, 2);
        assertThat(ports(send(filter, PickRequest.adapter("hot"), pool))).containsExactly(1, 2, 3);
        assertThat(ports(send(filter, PickRequest.adapter("new"), pool))).containsExactly(1, 2);
        assertThat(ports(send(filter, PickRequest.adapter("f"), pool))).containsExactly(1, 2, 3);
        assertThat(ports(send(filter, PickRequest.baseModel("base"), pool))).containsExactly(1, 2, 3);
        assertThat(filter.drains()).hasSize(1);
        assertThat(filter.drainsStarted())
                .as("one drain, however many picks see it")
                .isEqualTo(1);
        assertThat(filter.drainsInProgress())
                .containsExactly(new LoraSpreadFilter.DrainView(pool.get(2).endpoint(), "a", "hot"));
    }

    @Test
    void aCopyBeingDrainedDoesNotHideTheOverloadOfTheAdaptersOtherHolders() {
        // "shared" is in a slot on ports 1 and 2; "cold" only on port 2, whose queue is long. A send for "cold"
        // drains "shared" from port 1 (held elsewhere, fewest requests): all of its traffic now goes to port 2.
        List<EndpointState> pool = List.of(
                busy(1, 0, Map.of("shared", 1, "a", 30, "b", 30)),
                busy(2, 40, Map.of("shared", 200, "cold", 30, "c", 20)),
                busy(3, 0, Map.of("d", 30, "e", 20, "f", 10)));
        send(filter, PickRequest.adapter("cold"), pool);
        assertThat(filter.drains()).containsExactly(Map.entry(pool.get(0).endpoint(), "shared"));
        // Port 1 still shows "shared" in a slot with nothing waiting, but no request for it goes there: its only
        // home is port 2, 40 waiting against port 3's none, and it gets a slot drained on port 3.
        assertThat(ports(send(filter, PickRequest.adapter("shared"), pool))).containsExactly(2, 3);
        assertThat(filter.drains())
                .containsOnly(
                        Map.entry(pool.get(0).endpoint(), "shared"),
                        Map.entry(pool.get(2).endpoint(), "f"));
        assertThat(filter.drainsInProgress())
                .contains(new LoraSpreadFilter.DrainView(pool.get(2).endpoint(), "f", "shared"));
    }

    @Test
    void anAdapterWhoseOnlyCopyIsDrainedIsNotRescuedFromItsOwnDrain() {
        // "only" is in a slot on port 1 alone and has the fewest requests of the adapters there: a drain for "hot"
        // takes it. Its requests then wait where it has no slot, but the drain is what put them there.
        EndpointState drained = busy(1, 0, Map.of("only", 1, "a", 30, "b", 30));
        EndpointState hot = busy(2, 40, Map.of("hot", 200, "c", 30, "d", 20));
        send(filter, PickRequest.adapter("hot"), List.of(drained, hot));
        assertThat(filter.drains()).containsExactly(Map.entry(drained.endpoint(), "only"));
        EndpointState waitingThere = state(
                2,
                EndpointMetrics.builder()
                        .waitingRequests(41)
                        .slots(3, 3)
                        .resident("hot", SLOT)
                        .adapterRunning("hot", 200)
                        .resident("c", SLOT)
                        .adapterRunning("c", 30)
                        .resident("d", SLOT)
                        .adapterRunning("d", 20)
                        .adapterWaiting("only", 1)
                        .build());
        send(filter, PickRequest.adapter("only"), List.of(drained, waitingThere));
        assertThat(filter.drains()).containsExactly(Map.entry(drained.endpoint(), "only"));
    }

    @Test
    void aDrainStartsOnlyOnceItHasBeenWantedForThePersistenceTime() {
        LoraSpreadFilter patient = new LoraSpreadFilter(
                clock::get, new LoraSpreadFilter.Settings(8, 60_000_000_000L, 30_000_000_000L, 2_000));
        List<EndpointState> frozen = frozenPool();
        send(patient, PickRequest.adapter("hot"), frozen);
        clock.set(1_999);
        send(patient, PickRequest.adapter("hot"), frozen);
        assertThat(patient.drains()).as("wanted for 1.999 s of 2").isEmpty();
        // The queues even out for a moment (a burst passed): the clock starts again.
        List<EndpointState> even =
                List.of(busy(1, 2, Map.of("hot", 250, "a", 3, "b", 3)), frozen.get(1), frozen.get(2));
        send(patient, PickRequest.adapter("hot"), even);
        clock.set(3_000);
        send(patient, PickRequest.adapter("hot"), frozen);
        assertThat(patient.drains()).isEmpty();
        clock.set(5_000);
        send(patient, PickRequest.adapter("hot"), frozen);
        assertThat(patient.drains()).containsExactly(Map.entry(frozen.get(2).endpoint(), "a"));
        assertThat(new LoraSpreadFilter(clock::get).settings().persistenceNanos())
                .isEqualTo(LoraSpreadFilter.DEFAULT_PERSISTENCE_NANOS);
    }

    @Test
    void aRescueOfAnAdapterHeldNowhereDoesNotWaitForThePersistenceTime() {
        LoraSpreadFilter patient = new LoraSpreadFilter(
                clock::get, new LoraSpreadFilter.Settings(8, 60_000_000_000L, 30_000_000_000L, 2_000));
        EndpointState stuck = state(
                2,
                EndpointMetrics.builder()
                        .waitingRequests(5)
                        .slots(3, 3)
                        .resident("c", SLOT)
                        .adapterRunning("c", 60)
                        .resident("a", SLOT)
                        .adapterRunning("a", 9)
                        .resident("e", SLOT)
                        .adapterRunning("e", 4)
                        .adapterWaiting("lost", 5)
                        .build());
        List<EndpointState> pool = List.of(
                busy(1, 0, Map.of("hot", 250, "a", 3, "b", 3)), stuck, busy(3, 0, Map.of("f", 50, "g", 2, "h", 40)));
        send(patient, PickRequest.adapter("lost"), pool);
        assertThat(patient.drains()).containsExactly(Map.entry(stuck.endpoint(), "a"));
    }

    @Test
    void noDrainWhereTheQueueIsLongToo() {
        // Past the fleet's capacity: the holder has 400 waiting, the others 100 and 120, far fewer but not few.
        List<EndpointState> overloaded = List.of(
                busy(1, 400, Map.of("hot", 250, "a", 3, "b", 3)),
                busy(2, LoraSpreadFilter.MAX_TARGET_WAITING + 68, Map.of("c", 60, "d", 30, "e", 20)),
                busy(3, 120, Map.of("f", 50, "a", 2, "g", 40)));
        send(filter, PickRequest.adapter("hot"), overloaded);
        assertThat(filter.drains()).isEmpty();
        // The same pool with one endpoint at the bound: that one is drained.
        List<EndpointState> oneLight = List.of(
                overloaded.get(0),
                overloaded.get(1),
                busy(3, LoraSpreadFilter.MAX_TARGET_WAITING, Map.of("f", 50, "a", 2, "g", 40)));
        send(filter, PickRequest.adapter("hot"), oneLight);
        assertThat(filter.drains()).containsExactly(Map.entry(oneLight.get(2).endpoint(), "a"));
    }

    @Test
    void anAdapterHeldNowhereGetsASlotDrainedWhereItsRequestsAreStuck() {
        // "lost" lost its last slot while every slot in the pool is busy: its requests queue and would wait forever.
        EndpointState stuck = state(
                2,
                EndpointMetrics.builder()
                        .waitingRequests(5)
                        .slots(3, 3)
                        .resident("c", SLOT)
                        .adapterRunning("c", 60)
                        .resident("a", SLOT)
                        .adapterRunning("a", 9)
                        .resident("e", SLOT)
                        .adapterRunning("e", 4)
                        .adapterWaiting("lost", 5)
                        .build());
        List<EndpointState> pool = List.of(
                busy(1, 0, Map.of("hot", 250, "a", 3, "b", 3)), stuck, busy(3, 0, Map.of("f", 50, "g", 2, "h", 40)));
        send(filter, PickRequest.adapter("lost"), List.of(pool.get(0), pool.get(2)));
        assertThat(filter.drains())
                .as("no stuck request yet: a first request goes where it waits least")
                .isEmpty();
        send(filter, PickRequest.adapter("lost"), pool);
        // Drained where the requests wait; "a" is also held on port 1, so its traffic has somewhere to go.
        assertThat(filter.drains()).containsExactly(Map.entry(stuck.endpoint(), "a"));
    }

    @Test
    void equallyGoodVictimsAreChosenByNameSoPicksAreReproducible() {
        // Two adapters on port 3, both held elsewhere and with as many requests: the smaller name, whatever the
        // iteration order of the scraped maps (it changes from one JVM to the next).
        List<EndpointState> pool = List.of(
                busy(1, 40, Map.of("hot", 250, "m", 3, "b", 3)),
                busy(2, 40, Map.of("hot", 250, "k", 3, "e", 20)),
                busy(3, 0, Map.of("m", 5, "k", 5, "g", 40)));
        send(filter, PickRequest.adapter("hot"), pool);
        assertThat(filter.drains()).containsExactly(Map.entry(pool.get(2).endpoint(), "k"));
    }

    @Test
    void theDrainEndsWhenTheHotAdapterHasTheSlot() {
        send(filter, PickRequest.adapter("hot"), frozenPool());
        assertThat(filter.drains()).hasSize(1);
        List<EndpointState> moved = List.of(
                busy(1, 40, Map.of("hot", 250, "a", 3, "b", 3)),
                busy(2, 0, Map.of("c", 60, "d", 30, "e", 20)),
                busy(3, 0, Map.of("f", 50, "hot", 1, "g", 40)));
        send(filter, PickRequest.adapter("c"), moved);
        assertThat(filter.drains()).isEmpty();
    }

    @Test
    void theDrainEndsWhenAnotherAdapterTookTheSlotOrAfterTheTimeout() {
        send(filter, PickRequest.adapter("hot"), frozenPool());
        List<EndpointState> taken = List.of(
                busy(1, 40, Map.of("hot", 250, "a", 3, "b", 3)),
                busy(2, 0, Map.of("c", 60, "d", 30, "e", 20)),
                busy(3, 1, Map.of("f", 50, "x", 2, "g", 40)));
        send(filter, PickRequest.adapter("c"), taken);
        assertThat(filter.drains()).isEmpty();

        LoraSpreadFilter timed = new LoraSpreadFilter(clock::get, new LoraSpreadFilter.Settings(8, 1_000, 0, 0));
        send(timed, PickRequest.adapter("hot"), frozenPool());
        assertThat(timed.drains()).hasSize(1);
        clock.addAndGet(999);
        send(timed, PickRequest.adapter("c"), frozenPool());
        assertThat(timed.drains()).hasSize(1);
        clock.addAndGet(2);
        send(timed, PickRequest.adapter("c"), frozenPool());
        assertThat(timed.drains()).isEmpty();

        // A drain on an endpoint that left the pool times out too, so the hot adapter can get another.
        send(timed, PickRequest.adapter("hot"), frozenPool());
        assertThat(timed.drains()).hasSize(1);
        List<EndpointState> withoutPort3 = frozenPool().subList(0, 2);
        clock.addAndGet(1_001);
        send(timed, PickRequest.adapter("hot"), withoutPort3);
        assertThat(timed.drains()).containsExactly(Map.entry(withoutPort3.get(1).endpoint(), "e"));
    }

    @Test
    void anEndpointWhoseDrainEndedIsLeftAloneForTheCooldown() {
        LoraSpreadFilter cooled = new LoraSpreadFilter(clock::get, new LoraSpreadFilter.Settings(8, 60_000, 10_000, 0));
        send(cooled, PickRequest.adapter("hot"), frozenPool());
        List<EndpointState> arrived = List.of(
                busy(1, 40, Map.of("hot", 250, "a", 3, "b", 3)),
                busy(2, 0, Map.of("c", 60, "d", 30, "e", 20)),
                busy(3, 0, Map.of("f", 50, "hot", 1, "g", 40)));
        send(cooled, PickRequest.adapter("c"), arrived);
        assertThat(cooled.drains()).isEmpty();
        // Another hot adapter "k" is overloaded on port 4; port 3, which just took a slot, is the only short queue.
        List<EndpointState> next =
                List.of(busy(4, 40, Map.of("k", 250, "f", 3, "z", 3)), busy(3, 0, Map.of("f", 50, "hot", 1, "g", 40)));
        clock.addAndGet(9_999);
        send(cooled, PickRequest.adapter("k"), next);
        assertThat(cooled.drains()).isEmpty();
        clock.addAndGet(2);
        send(cooled, PickRequest.adapter("k"), next);
        assertThat(cooled.drains()).containsExactly(Map.entry(next.get(1).endpoint(), "f"));
    }

    @Test
    void noDrainWhileSomeEndpointHasRoomOrTheHoldersKeepUp() {
        List<EndpointState> withRoom = List.of(
                busy(1, 40, Map.of("hot", 250, "a", 3, "b", 3)),
                state(
                        2,
                        EndpointMetrics.builder()
                                .slots(3, 2)
                                .resident("c", SLOT)
                                .adapterRunning("c", 5)
                                .resident("d", SLOT)
                                .adapterRunning("d", 5)
                                .build()));
        send(filter, PickRequest.adapter("hot"), withRoom);
        List<EndpointState> keepingUp =
                List.of(busy(1, 7, Map.of("hot", 250, "a", 3, "b", 3)), busy(2, 0, Map.of("c", 60, "d", 30, "e", 20)));
        send(filter, PickRequest.adapter("hot"), keepingUp);
        List<EndpointState> legacyOnly = List.of(
                state(
                        1,
                        EndpointMetrics.builder()
                                .waitingRequests(40)
                                .activeAdapters(Set.of("hot"))
                                .maxLora(1)
                                .build()),
                state(
                        2,
                        EndpointMetrics.builder()
                                .activeAdapters(Set.of("c"))
                                .maxLora(1)
                                .build()));
        send(filter, PickRequest.adapter("hot"), legacyOnly);
        assertThat(filter.drains()).isEmpty();
    }

    /** Like {@link #busy} with nothing waiting, and the adapters' requests as the running count. */
    private static EndpointState running(int port, Map<String, Integer> running) {
        EndpointMetrics.Builder b = EndpointMetrics.builder()
                .runningRequests(
                        running.values().stream().mapToInt(Integer::intValue).sum())
                .slots(3, running.size());
        running.forEach((name, n) -> {
            b.resident(name, SLOT);
            b.adapterRunning(name, n);
        });
        return state(port, b.build());
    }

    @Test
    void holdersWithTwiceTheRequestsOfAnotherEndpointDrainASlotThereBeforeAnyQueueForms() {
        // Near saturation no queue forms until a batch is full; the running counts already tell.
        EndpointState holder = running(1, Map.of("hot", 200, "a", 40, "b", 10));
        List<EndpointState> halfAsBusy = List.of(holder, running(2, Map.of("c", 60, "d", 40, "a", 25)));
        send(filter, PickRequest.adapter("hot"), halfAsBusy);
        assertThat(filter.drains()).containsExactly(Map.entry(halfAsBusy.get(1).endpoint(), "a"));
    }

    @Test
    void noDrainForALoadGapUnderTwiceOrAtLowLoad() {
        send(
                filter,
                PickRequest.adapter("hot"),
                List.of(
                        running(1, Map.of("hot", 200, "a", 40, "b", 10)),
                        running(2, Map.of("c", 60, "d", 40, "a", 30))));
        assertThat(filter.drains()).as("250 against 130: under twice").isEmpty();
        send(
                filter,
                PickRequest.adapter("hot"),
                List.of(running(1, Map.of("hot", 20, "a", 5, "b", 5)), running(2, Map.of("c", 2, "d", 2, "a", 1))));
        assertThat(filter.drains())
                .as("30 against 5: too few requests to be worth a load")
                .isEmpty();
    }

    @Test
    void oneDrainPerHotAdapterAndPerEndpoint() {
        List<EndpointState> pool = new ArrayList<>(frozenPool());
        pool.add(busy(4, 0, Map.of("h", 10, "i", 10, "j", 10)));
        send(filter, PickRequest.adapter("hot"), pool);
        send(filter, PickRequest.adapter("hot"), pool);
        assertThat(filter.drains()).hasSize(1);
    }

    @Test
    void thePatchbayProfileSendsTheHotAdapterToTheDrainedSlot() {
        AtomicLong now = new AtomicLong();
        EndpointPicker picker = Profiles.create(Profiles.PATCHBAY, new Random(1), now::get);
        List<EndpointState> pool = frozenPool();
        assertThat(sendVia(picker, PickRequest.adapter("hot"), pool)
                        .best()
                        .endpoint()
                        .port())
                .isEqualTo(1);
        now.set(LoraSpreadFilter.DEFAULT_PERSISTENCE_NANOS); // the placement stayed frozen: the drain starts
        assertThat(sendVia(picker, PickRequest.adapter("hot"), pool)
                        .best()
                        .endpoint()
                        .port())
                .isEqualTo(1);
        // "a" has drained from port 3: its slot is idle, and the hot adapter's next request takes it.
        List<EndpointState> drained = List.of(
                pool.get(0),
                pool.get(1),
                state(
                        3,
                        EndpointMetrics.builder()
                                .waitingRequests(1)
                                .slots(3, 3)
                                .resident("f", SLOT)
                                .adapterRunning("f", 50)
                                .resident("a", SLOT)
                                .resident("g", SLOT)
                                .adapterRunning("g", 40)
                                .build()));
        assertThat(picker.pick(PickRequest.adapter("hot"), drained)
                        .best()
                        .endpoint()
                        .port())
                .isEqualTo(3);
        assertThat(picker.pick(PickRequest.adapter("new"), drained).ranked())
                .extracting(s -> s.endpoint().port())
                .doesNotContain(3);
    }

    /** A pick by the whole profile whose request is sent to its best endpoint. */
    private static PickResult sendVia(EndpointPicker picker, PickRequest request, List<EndpointState> pool) {
        PickResult result = picker.pick(request, pool);
        picker.preRequest(new Fixtures.SentRequest(request, pool, result.best()));
        return result;
    }

    @Test
    void concurrentSendsStartAtMostOneDrainPerEndpoint() throws Exception {
        List<EndpointState> pool = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            pool.add(busy(100 + i, i < 10 ? 40 : 0, Map.of("hot" + i, 200, "c" + i, 5 + i, "d" + i, 50)));
        }
        ExecutorService threads = Executors.newFixedThreadPool(8);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            int seed = t;
            done.add(threads.submit(() -> {
                start.await();
                Random random = new Random(seed);
                for (int i = 0; i < 2_000; i++) {
                    String adapter = "hot" + random.nextInt(10);
                    List<EndpointState> kept = send(filter, PickRequest.adapter(adapter), pool);
                    assertThat(kept).isNotEmpty();
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : done) {
            f.get();
        }
        threads.shutdown();
        // Ten hot adapters, each with one overloaded holder; ten endpoints that could give a slot.
        Map<Endpoint, String> drains = filter.drains();
        assertThat(drains).hasSizeBetween(1, 10);
        assertThat(drains.keySet()).allSatisfy(e -> assertThat(e.port()).isBetween(110, 119));
    }
}
