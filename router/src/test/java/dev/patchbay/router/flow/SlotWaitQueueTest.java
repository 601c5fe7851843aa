package dev.patchbay.router.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.PickResult;
import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class SlotWaitQueueTest {
    private static final long SECOND = 1_000_000_000L;

    /** Two slots, both busy with other adapters' running requests. */
    private static final EndpointState BUSY = new EndpointState(
            new Endpoint("127.0.0.1", 8001),
            EndpointMetrics.builder()
                    .slots(2, 2)
                    .resident("a", AdapterResidency.IN_SLOT)
                    .resident("b", AdapterResidency.IN_SLOT)
                    .adapterRunning("a", 1)
                    .adapterRunning("b", 1)
                    .build());
    /** Two slots, one free. */
    private static final EndpointState FREE = new EndpointState(
            new Endpoint("127.0.0.1", 8002),
            EndpointMetrics.builder()
                    .slots(2, 1)
                    .resident("a", AdapterResidency.IN_SLOT)
                    .adapterRunning("a", 1)
                    .build());

    private static PickResult busy() {
        return new PickResult(PickResult.Outcome.PICKED, List.of(BUSY));
    }

    private static PickResult free() {
        return new PickResult(PickResult.Outcome.PICKED, List.of(FREE));
    }

    /** A request whose picks come from {@code picks} and whose release is logged. */
    private static class Recorder implements SlotWaitQueue.Waiter {
        final String name;
        final Supplier<PickResult> picks;
        final List<String> log;
        PickResult releasedWith;

        Recorder(String name, Supplier<PickResult> picks, List<String> log) {
            this.name = name;
            this.picks = picks;
            this.log = log;
        }

        @Override
        public PickResult repick() {
            return picks.get();
        }

        @Override
        public void release(PickResult pick) {
            releasedWith = pick;
            log.add(name);
        }
    }

    @Test
    void onlyAdapterRequestsWithNoSlotAnywhereWait() {
        SlotWaitQueue queue = new SlotWaitQueue(SECOND, () -> 0);
        List<String> log = new ArrayList<>();
        assertThat(queue.hold(PickRequest.adapter("sql"), free(), new Recorder("free", SlotWaitQueueTest::free, log)))
                .isFalse();
        assertThat(queue.hold(PickRequest.baseModel("m"), busy(), new Recorder("base", SlotWaitQueueTest::busy, log)))
                .as("a base-model request needs no slot")
                .isFalse();
        assertThat(queue.hold(PickRequest.adapter("a"), busy(), new Recorder("a", SlotWaitQueueTest::busy, log)))
                .as("its adapter is in a slot there")
                .isFalse();
        assertThat(queue.hold(
                        PickRequest.adapter("sql"),
                        new PickResult(PickResult.Outcome.NO_ENDPOINT, List.of()),
                        new Recorder("none", SlotWaitQueueTest::busy, log)))
                .isFalse();
        assertThat(queue.hold(PickRequest.adapter("sql"), busy(), new Recorder("busy", SlotWaitQueueTest::busy, log)))
                .isTrue();
        assertThat(queue.size()).isEqualTo(1);
        assertThat(log).isEmpty();
    }

    @Test
    void aFreedSlotGoesToTheOldestRequestAndTheNextSeesItTaken() {
        AtomicInteger freeSlots = new AtomicInteger();
        List<String> log = new ArrayList<>();
        SlotWaitQueue queue = new SlotWaitQueue(10 * SECOND, () -> 0);
        // Each release takes the free slot, as recording its send with the pool would.
        List<Recorder> waiters = new ArrayList<>();
        for (String name : List.of("first", "second", "third")) {
            Recorder waiter = new Recorder(name, () -> freeSlots.get() > 0 ? free() : busy(), log) {
                @Override
                public void release(PickResult pick) {
                    if (pick.best() == FREE) freeSlots.decrementAndGet();
                    super.release(pick);
                }
            };
            waiters.add(waiter);
            assertThat(queue.hold(PickRequest.adapter("sql-" + name), busy(), waiter))
                    .isTrue();
        }
        queue.releaseReady();
        assertThat(log).as("no slot yet").isEmpty();
        freeSlots.set(1);
        queue.releaseReady();
        assertThat(log).containsExactly("first");
        assertThat(waiters.getFirst().releasedWith.best()).isSameAs(FREE);
        freeSlots.set(2);
        queue.releaseReady();
        assertThat(log).containsExactly("first", "second", "third");
        assertThat(queue.size()).isZero();
    }

    @Test
    void aRequestHeldAgainTakesItsPlaceByItsFirstWaitsEnd() {
        AtomicLong now = new AtomicLong();
        AtomicInteger freeSlots = new AtomicInteger();
        List<String> log = new ArrayList<>();
        SlotWaitQueue queue = new SlotWaitQueue(10 * SECOND, now::get);
        Supplier<PickResult> picks = () -> freeSlots.get() > 0 ? free() : busy();
        now.set(SECOND);
        queue.hold(PickRequest.adapter("later"), busy(), new Recorder("later", picks, log) {
            @Override
            public void release(PickResult pick) {
                if (pick.best() == FREE) freeSlots.decrementAndGet();
                super.release(pick);
            }
        });
        // Refused by a server after it arrived at 0: it waits until 10 s, before the one that arrived at 1 s.
        assertThat(queue.holdAgain(PickRequest.adapter("earlier"), new Recorder("earlier", picks, log), 10 * SECOND))
                .isTrue();
        assertThat(queue.size()).isEqualTo(2);
        freeSlots.set(1);
        queue.releaseReady();
        assertThat(log).containsExactly("earlier", "later");

        now.set(12 * SECOND);
        assertThat(queue.holdAgain(PickRequest.adapter("late"), new Recorder("late", picks, log), 10 * SECOND))
                .as("its wait is over: it goes out at once")
                .isFalse();
    }

    @Test
    void aRequestRefusedDuringARoundIsPickedAgainFromTheNextRoundOn() {
        SlotWaitQueue queue = new SlotWaitQueue(10 * SECOND, () -> 0);
        List<String> log = new ArrayList<>();
        AtomicInteger refusals = new AtomicInteger();
        // Its pick finds the free slot a stale page shows; the server refuses it, and it is held again at once.
        SlotWaitQueue.Waiter refused = new Recorder("refused", SlotWaitQueueTest::free, log) {
            @Override
            public void release(PickResult pick) {
                super.release(pick);
                if (refusals.incrementAndGet() == 1) {
                    assertThat(queue.holdAgain(PickRequest.adapter("sql"), this, 10 * SECOND))
                            .isTrue();
                }
            }
        };
        queue.hold(PickRequest.adapter("sql"), busy(), refused);
        queue.releaseReady();
        assertThat(log).as("released once in the round").containsExactly("refused");
        assertThat(queue.size()).isEqualTo(1);
        queue.releaseReady();
        assertThat(log).containsExactly("refused", "refused");
        assertThat(queue.size()).isZero();
    }

    @Test
    void aRoundPicksOnceForWaitersThatPickAlikeUntilSomethingIsReleased() {
        AtomicLong now = new AtomicLong();
        AtomicInteger freeSlots = new AtomicInteger();
        AtomicInteger picksMade = new AtomicInteger();
        List<String> released = new ArrayList<>();
        SlotWaitQueue queue = new SlotWaitQueue(SECOND, now::get);
        class Keyed extends Recorder {
            final String key;

            Keyed(String name, String key) {
                super(
                        name,
                        () -> {
                            picksMade.incrementAndGet();
                            return freeSlots.get() > 0 ? free() : busy();
                        },
                        released);
                this.key = key;
            }

            @Override
            public void release(PickResult pick) {
                if (pick.best() == FREE) freeSlots.decrementAndGet();
                super.release(pick);
            }

            @Override
            public Object repickKey() {
                return key;
            }
        }
        for (String name : List.of("sql-1", "chat-1", "sql-2", "chat-2", "sql-3")) {
            assertThat(queue.hold(PickRequest.adapter(name), busy(), new Keyed(name, name.split("-")[0])))
                    .isTrue();
        }
        queue.releaseReady();
        assertThat(picksMade.get())
                .as("one pick per key while nothing is released")
                .isEqualTo(2);
        assertThat(released).isEmpty();

        picksMade.set(0);
        freeSlots.set(1);
        queue.releaseReady();
        assertThat(released).containsExactly("sql-1");
        assertThat(picksMade.get())
                .as("after the release every key is picked for again")
                .isEqualTo(3);

        picksMade.set(0);
        now.set(SECOND);
        queue.releaseReady();
        assertThat(released)
                .as("waiters past the longest wait each go out with a pick of their own")
                .containsExactly("sql-1", "chat-1", "sql-2", "chat-2", "sql-3");
        assertThat(picksMade.get()).isEqualTo(4);
    }

    @Test
    void aRequestGoesOutAfterTheLongestWaitWithThePickOfThen() {
        AtomicLong now = new AtomicLong();
        List<String> log = new ArrayList<>();
        SlotWaitQueue queue = new SlotWaitQueue(SECOND, now::get);
        Recorder early = new Recorder("early", SlotWaitQueueTest::busy, log);
        assertThat(queue.hold(PickRequest.adapter("sql"), busy(), early)).isTrue();
        now.set(SECOND / 2);
        Recorder late = new Recorder("late", SlotWaitQueueTest::busy, log);
        assertThat(queue.hold(PickRequest.adapter("sql"), busy(), late)).isTrue();
        now.set(SECOND - 1);
        queue.releaseReady();
        assertThat(log).isEmpty();
        now.set(SECOND);
        queue.releaseReady();
        assertThat(log).containsExactly("early");
        assertThat(early.releasedWith.best()).isSameAs(BUSY);
        assertThat(queue.remove(late)).isTrue();
        assertThat(queue.remove(late)).as("removed already").isFalse();
        assertThat(queue.remove(early)).as("released already").isFalse();
        now.set(10 * SECOND);
        queue.releaseReady();
        assertThat(log).containsExactly("early");
    }

    @Test
    void aFullQueueSendsAtOnceAndStoppingReleasesEveryone() {
        SlotWaitQueue queue = new SlotWaitQueue(SECOND, () -> 0);
        List<String> log = new ArrayList<>();
        for (int i = 0; i < SlotWaitQueue.MAX_HELD; i++) {
            assertThat(queue.hold(
                            PickRequest.adapter("sql"), busy(), new Recorder("r" + i, SlotWaitQueueTest::busy, log)))
                    .isTrue();
        }
        assertThat(queue.hold(PickRequest.adapter("sql"), busy(), new Recorder("over", SlotWaitQueueTest::busy, log)))
                .isFalse();
        queue.releaseAll();
        assertThat(log).hasSize(SlotWaitQueue.MAX_HELD).startsWith("r0", "r1");
        assertThat(queue.size()).isZero();
    }

    @Test
    void aWaitMustBePositive() {
        assertThatThrownBy(() -> new SlotWaitQueue(0, () -> 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("> 0");
    }

    @Test
    void requestsHeldFromManyThreadsWhileRoundsReleaseThemAreEachReleasedOnce() throws Exception {
        AtomicBoolean slotFree = new AtomicBoolean();
        SlotWaitQueue queue = new SlotWaitQueue(1000 * SECOND, () -> 0);
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        ConcurrentHashMap<String, AtomicInteger> releases = new ConcurrentHashMap<>();
        int threads = 8, perThread = 500;
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger held = new AtomicInteger();
        try (ExecutorService pool = Executors.newFixedThreadPool(threads + 1)) {
            List<Future<?>> holders = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                holders.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        String name = thread + "-" + i;
                        Recorder waiter = new Recorder(name, () -> slotFree.get() ? free() : busy(), log) {
                            @Override
                            public void release(PickResult pick) {
                                releases.computeIfAbsent(name, n -> new AtomicInteger())
                                        .incrementAndGet();
                                super.release(pick);
                            }
                        };
                        if (queue.hold(PickRequest.adapter("sql"), busy(), waiter)) held.incrementAndGet();
                    }
                    return null;
                }));
            }
            AtomicBoolean rounds = new AtomicBoolean(true);
            var releaser = pool.submit(() -> {
                start.await();
                int round = 0;
                while (rounds.get()) {
                    slotFree.set(round++ % 2 == 0); // rounds that free slots and rounds that do not
                    queue.releaseReady();
                }
                return null;
            });
            start.countDown();
            for (var holder : holders) {
                holder.get();
            }
            rounds.set(false);
            releaser.get();
        }
        slotFree.set(true);
        queue.releaseReady();
        assertThat(held.get()).isEqualTo(threads * perThread);
        assertThat(queue.size()).isZero();
        assertThat(releases).hasSize(threads * perThread);
        assertThat(releases.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        assertThat(log).hasSize(threads * perThread);
    }
}
