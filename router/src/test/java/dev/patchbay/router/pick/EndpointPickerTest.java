package dev.patchbay.router.pick;

import static dev.patchbay.router.pick.Fixtures.ports;
import static dev.patchbay.router.pick.Fixtures.queue;
import static dev.patchbay.router.pick.Fixtures.state;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.patchbay.router.flow.SaturationDetector;
import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EndpointPickerTest {
    private static final PickRequest SQL = PickRequest.adapter("sql");

    @Test
    void maxScorePickerRanksByScoreAndBreaksTiesAtRandom() {
        List<EndpointState> states = List.of(queue(1, 0, 0), queue(2, 0, 0), queue(3, 0, 0), queue(4, 0, 0));
        double[] scores = {1.0, 3.0, 3.0, 2.0};
        MaxScorePicker picker = new MaxScorePicker(new Random(7));
        Map<Integer, Integer> firsts = new HashMap<>();
        for (int i = 0; i < 2000; i++) {
            List<Integer> ranked = ports(picker.rank(states, scores));
            assertThat(ranked.subList(2, 4)).containsExactly(4, 1);
            assertThat(ranked.subList(0, 2)).containsExactlyInAnyOrder(2, 3);
            firsts.merge(ranked.getFirst(), 1, Integer::sum);
        }
        assertThat(firsts.get(2)).isBetween(850, 1150);
        assertThat(firsts.get(3)).isBetween(850, 1150);
    }

    @Test
    void sameSeedSamePicks() {
        List<EndpointState> states = List.of(queue(1, 0, 0), queue(2, 0, 0), queue(3, 0, 0));
        double[] scores = {1, 1, 1};
        MaxScorePicker a = new MaxScorePicker(new Random(42));
        MaxScorePicker b = new MaxScorePicker(new Random(42));
        for (int i = 0; i < 50; i++) {
            assertThat(ports(a.rank(states, scores))).isEqualTo(ports(b.rank(states, scores)));
        }
    }

    @Test
    void roundRobinTakesEndpointsInTurn() {
        RoundRobinPicker picker = new RoundRobinPicker();
        List<EndpointState> states = List.of(queue(3, 0, 0), queue(1, 0, 0), queue(2, 0, 0));
        List<Integer> firsts = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            List<Integer> ranked = ports(picker.rank(states, new double[3]));
            assertThat(ranked).hasSize(3).doesNotHaveDuplicates();
            firsts.add(ranked.getFirst());
        }
        assertThat(firsts).containsExactly(1, 2, 3, 1, 2, 3);
    }

    @Test
    void defaultProfileWeighsQueueKvResidencyPrefillAndBridge() {
        EndpointPicker picker = Profiles.create(Profiles.PATCHBAY, new Random(1));
        assertThat(picker.scorers())
                .extracting(w -> w.scorer().name() + "=" + w.weight())
                .containsExactly(
                        "queue=2.0", "kv-cache=2.0", "lora-residency=3.0", "prefill-queue=0.75", "lora-bridge=0.3");
        // One waiting request more (a quarter of the queue score's minimum spread of 4) does not outweigh the
        // adapter being in a slot rather than a free one (3 x 0.4); four more do.
        EndpointState warm = state(
                1,
                EndpointMetrics.builder()
                        .waitingRequests(2)
                        .kvCacheUsage(0.5)
                        .slots(2, 1)
                        .resident("sql", AdapterResidency.IN_SLOT)
                        .build());
        EndpointState cold = state(
                2,
                EndpointMetrics.builder()
                        .waitingRequests(1)
                        .kvCacheUsage(0.5)
                        .slots(2, 0)
                        .build());
        double[] totals = picker.totalScores(SQL, List.of(warm, cold));
        // (prefill-queue scores only where the adapter is placed best: the warm one, nothing in flight there;
        // lora-bridge gives both 0.3: the holder, and an empty endpoint outside its group)
        assertThat(totals[0]).isCloseTo(2 * 0.75 + 2 * 0.5 + 3 * 1.0 + 0.75 + 0.3, within(1e-9));
        assertThat(totals[1]).isCloseTo(2 * 1 + 2 * 0.5 + 3 * 0.6 + 0.3, within(1e-9));
        assertThat(ports(picker.pick(SQL, List.of(warm, cold)).ranked())).containsExactly(1, 2);
        EndpointState busyWarm = state(
                1,
                EndpointMetrics.builder()
                        .waitingRequests(5)
                        .kvCacheUsage(0.5)
                        .slots(2, 1)
                        .resident("sql", AdapterResidency.IN_SLOT)
                        .build());
        assertThat(ports(picker.pick(SQL, List.of(busyWarm, cold)).ranked())).containsExactly(2, 1);
        assertThat(picker.preRequests()).hasAtLeastOneElementOfType(OwnPicksCounter.class);
        assertThat(Profiles.create(Profiles.GIE_LORA, new Random(1)).preRequests())
                .isEmpty();
    }

    @Test
    void patchbayProfilePrefersTheResidentAdapterWhenLoadIsEqual() {
        EndpointPicker picker = Profiles.create(Profiles.PATCHBAY, new Random(3));
        List<EndpointState> states = ScorersTest.onePerPlacement();
        for (int i = 0; i < 20; i++) {
            assertThat(ports(picker.pick(SQL, states).ranked())).containsExactly(1, 2, 3, 4);
        }
    }

    /**
     * Every slot in the pool taken and each adapter in one: a second request for an adapter whose load is under way
     * must join that load. A second copy on the lighter endpoint would evict the idle adapter there, its only copy,
     * whose next request evicts another: the chain that kept a fleet of three at a slot hit ratio near 0.8.
     */
    @Test
    void patchbayJoinsALoadUnderWayRatherThanEvictingAnotherAdaptersOnlyCopy() {
        EndpointPicker picker = Profiles.create(Profiles.PATCHBAY, new Random(1));
        EndpointState loading = state(
                1,
                EndpointMetrics.builder()
                        .waitingRequests(1)
                        .runningRequests(1)
                        .slots(2, 2)
                        .resident("a", AdapterResidency.IN_SLOT)
                        .resident("b", AdapterResidency.IN_SLOT)
                        .adapterRunning("a", 1)
                        .adapterWaiting("sql", 1)
                        .build());
        EndpointState lighter = state(
                2,
                EndpointMetrics.builder()
                        .slots(2, 2)
                        .resident("c", AdapterResidency.IN_SLOT)
                        .resident("d", AdapterResidency.IN_SLOT)
                        .build());
        assertThat(picker.pick(SQL, List.of(loading, lighter)).best().endpoint().port())
                .isEqualTo(1);

        // The same within one scrape interval, from the router's own count of what it sent.
        EndpointState twin = state(
                1,
                EndpointMetrics.builder()
                        .slots(2, 2)
                        .resident("a", AdapterResidency.IN_SLOT)
                        .resident("b", AdapterResidency.IN_SLOT)
                        .build());
        EndpointState first = picker.pick(SQL, List.of(twin, lighter)).best();
        EndpointState afterSend =
                new EndpointState(first.endpoint(), first.metrics().withRequestSent("sql"));
        EndpointState other = first.endpoint().equals(twin.endpoint()) ? lighter : twin;
        assertThat(picker.pick(SQL, List.of(other, afterSend)).best().endpoint())
                .isEqualTo(first.endpoint());
    }

    @Test
    void gieLoraProfileReadsOnlyTheLegacyGauge() {
        EndpointPicker picker = Profiles.create(Profiles.GIE_LORA, new Random(3));
        EndpointState residentOnly = state(
                1,
                EndpointMetrics.builder()
                        .maxLora(1)
                        .activeAdapters(Set.of("a"))
                        .slots(2, 1)
                        .resident("sql", AdapterResidency.IN_SLOT)
                        .build());
        EndpointState active = state(
                2,
                EndpointMetrics.builder()
                        .maxLora(1)
                        .activeAdapters(Set.of("sql"))
                        .build());
        assertThat(picker.pick(SQL, List.of(residentOnly, active))
                        .best()
                        .endpoint()
                        .port())
                .isEqualTo(2);
    }

    @Test
    void everyNamedProfileBuildsAndPicks() {
        List<EndpointState> states = List.of(queue(1, 3, 0.5), queue(2, 0, 0.1));
        for (String name : Profiles.NAMES) {
            PickResult result = Profiles.create(name, new Random(5)).pick(SQL, states);
            assertThat(result.outcome()).as(name).isEqualTo(PickResult.Outcome.PICKED);
            assertThat(result.ranked()).as(name).hasSize(2);
        }
        assertThat(Profiles.create(Profiles.LEAST_QUEUE, new Random(1))
                        .pick(SQL, states)
                        .best()
                        .endpoint()
                        .port())
                .isEqualTo(2);
        assertThatThrownBy(() -> Profiles.create("fastest", new Random(1))).hasMessageContaining("unknown profile");
    }

    @Test
    void noCandidatesMeansNoEndpoint() {
        assertThat(Profiles.create(Profiles.PATCHBAY, new Random(1))
                        .pick(SQL, List.of())
                        .outcome())
                .isEqualTo(PickResult.Outcome.NO_ENDPOINT);
    }

    @Test
    void sheddableRequestsAreShedOnlyWhenEveryEndpointIsSaturated() {
        SaturationDetector saturation = SaturationDetector.DEFAULT;
        assertThat(saturation.isSaturated(List.of(queue(1, 6, 0.9), queue(2, 10, 0.81))))
                .isTrue();
        assertThat(saturation.isSaturated(List.of(queue(1, 6, 0.9), queue(2, 5, 0.95))))
                .as("one has room")
                .isFalse();
        assertThat(saturation.isSaturated(List.of(queue(1, 6, 0.9), queue(2, 50, 0.8))))
                .as("KV use at 0.8")
                .isFalse();
        assertThat(saturation.isSaturated(List.of())).isFalse();
        assertThat(new SaturationDetector(1, 0.5).isSaturated(List.of(queue(1, 2, 0.6))))
                .as("stricter")
                .isTrue();
    }

    @Test
    void concurrentPicksAreConsistent() throws Exception {
        EndpointPicker picker = Profiles.create(Profiles.PATCHBAY, new Random(11));
        List<EndpointState> states = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            states.add(queue(1000 + i, i % 3, 0.1 * (i % 3)));
        }
        // queue 0 and kv 0 only at ports 1000, 1003, 1006 and 1009: the best, tied
        Map<Integer, AtomicInteger> counts = new ConcurrentHashMap<>();
        int threads = 8;
        int picksPerThread = 5000;
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    go.await(5, TimeUnit.SECONDS);
                    for (int i = 0; i < picksPerThread; i++) {
                        int port = picker.pick(SQL, states).best().endpoint().port();
                        counts.computeIfAbsent(port, p -> new AtomicInteger()).incrementAndGet();
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        int total = threads * picksPerThread;
        assertThat(counts).containsOnlyKeys(1000, 1003, 1006, 1009);
        assertThat(counts.values().stream().mapToInt(AtomicInteger::get).sum()).isEqualTo(total);
        for (AtomicInteger count : counts.values()) {
            assertThat(count.get()).isBetween(total / 4 - total / 20, total / 4 + total / 20);
        }
    }
}
