package dev.patchbay.router.pick;

import static dev.patchbay.router.pick.Fixtures.ports;
import static dev.patchbay.router.pick.Fixtures.queue;
import static dev.patchbay.router.pick.Fixtures.state;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * What each built-in profile does, picked for on small pools built for it: the profiles are declared once, in their
 * files, and checked here by how they pick, not against a copy.
 */
class BuiltInProfilesTest {
    private static final PickRequest SQL = PickRequest.adapter("sql");

    private static EndpointPicker profile(String name) {
        return Profiles.create(name, new Random(1));
    }

    @Test
    void everyBuiltInProfileLoadsFromItsFileAndPicksAmongReadyEndpoints() {
        List<EndpointState> two = List.of(queue(1, 0, 0.1), queue(2, 3, 0.5));
        for (String name : Profiles.NAMES) {
            EndpointPicker picker = profile(name);
            assertThat(picker.name()).isEqualTo(name);
            assertThat(picker.pick(SQL, two).outcome()).as(name).isEqualTo(PickResult.Outcome.PICKED);
            assertThat(picker.pick(SQL, List.of()).outcome()).as(name).isEqualTo(PickResult.Outcome.NO_ENDPOINT);
        }
        assertThatThrownBy(() -> Profiles.create("fastest", new Random(1))).hasMessageContaining("unknown profile");
    }

    @Test
    void roundRobinTakesEndpointsInTurnWhateverTheirLoad() {
        EndpointPicker picker = profile(Profiles.ROUND_ROBIN);
        List<EndpointState> pool = List.of(queue(1, 50, 0.9), queue(2, 0, 0.0), queue(3, 9, 0.5));
        List<Integer> firsts = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            firsts.add(picker.pick(SQL, pool).best().endpoint().port());
        }
        assertThat(firsts).containsExactly(1, 2, 3, 1, 2, 3);
    }

    @Test
    void leastQueueTakesTheShortestWaitingQueue() {
        List<EndpointState> pool = List.of(queue(1, 4, 0.0), queue(2, 1, 0.9), queue(3, 2, 0.0));
        assertThat(profile(Profiles.LEAST_QUEUE)
                        .pick(SQL, pool)
                        .best()
                        .endpoint()
                        .port())
                .isEqualTo(2);
    }

    @Test
    void gieDefaultWeighsQueueAndKvCacheAlike() {
        EndpointPicker picker = profile(Profiles.GIE_DEFAULT);
        assertThat(picker.pick(SQL, List.of(queue(1, 2, 0.9), queue(2, 2, 0.1)))
                        .best()
                        .endpoint()
                        .port())
                .as("equal queues: the emptier KV cache")
                .isEqualTo(2);
        assertThat(picker.pick(SQL, List.of(queue(1, 0, 0.5), queue(2, 9, 0.5)))
                        .best()
                        .endpoint()
                        .port())
                .as("equal KV use: the shorter queue")
                .isEqualTo(1);
    }

    @Test
    void gieLoraPrefersWhereTheLegacyGaugeShowsTheAdapterActive() {
        EndpointState active = state(
                1,
                EndpointMetrics.builder()
                        .waitingRequests(1)
                        .kvCacheUsage(0.3)
                        .activeAdapters(Set.of("sql"))
                        .maxLora(2)
                        .build());
        EndpointState idle = state(
                2,
                EndpointMetrics.builder()
                        .waitingRequests(1)
                        .kvCacheUsage(0.3)
                        .maxLora(2)
                        .build());
        EndpointState full = state(
                3,
                EndpointMetrics.builder()
                        .waitingRequests(1)
                        .kvCacheUsage(0.3)
                        .activeAdapters(Set.of("a", "b"))
                        .maxLora(2)
                        .build());
        assertThat(ports(profile(Profiles.GIE_LORA)
                        .pick(SQL, List.of(full, idle, active))
                        .ranked()))
                .containsExactly(1, 2, 3);
        assertThat(profile(Profiles.GIE_LORA).preRequests())
                .as("the gateway counts no picks of its own")
                .isEmpty();
    }

    @Test
    void llmdLoadStateKeepsTheAdaptersHomesWhileOneHasRoom() {
        EndpointState home = state(
                1,
                EndpointMetrics.builder()
                        .waitingRequests(3)
                        .kvCacheUsage(0.4)
                        .slots(2, 1)
                        .resident("sql", AdapterResidency.IN_SLOT)
                        .adapterRunning("sql", 2)
                        .build());
        EndpointState emptier = state(
                2,
                EndpointMetrics.builder()
                        .waitingRequests(0)
                        .kvCacheUsage(0.0)
                        .slots(2, 0)
                        .build());
        EndpointPicker picker = profile(Profiles.LLMD_LOAD_STATE);
        assertThat(ports(picker.pick(SQL, List.of(emptier, home)).ranked()))
                .as("the filter keeps only the home")
                .containsExactly(1);
        EndpointState saturatedHome = state(
                1,
                EndpointMetrics.builder()
                        .waitingRequests(20)
                        .kvCacheUsage(0.9)
                        .slots(2, 1)
                        .resident("sql", AdapterResidency.IN_SLOT)
                        .adapterRunning("sql", 2)
                        .build());
        assertThat(picker.pick(SQL, List.of(emptier, saturatedHome))
                        .best()
                        .endpoint()
                        .port())
                .as("a saturated home opens a new copy elsewhere")
                .isEqualTo(2);
    }

    @Test
    void patchbayTakesTheAdaptersSlotAndCountsItsOwnPicks() {
        EndpointPicker picker = profile(Profiles.PATCHBAY);
        for (int i = 0; i < 10; i++) {
            // In a slot, in host memory, a free slot, an idle one to evict; one whose slots are all busy is filtered
            // out.
            assertThat(ports(picker.pick(SQL, ScorersTest.onePerPlacement()).ranked()))
                    .containsExactly(1, 2, 3, 4);
        }
        assertThat(picker.preRequests())
                .hasAtLeastOneElementOfType(OwnPicksCounter.class)
                .as("lora-spread moves its drains as requests are sent")
                .hasAtLeastOneElementOfType(LoraSpreadFilter.class);
    }

    /**
     * A vLLM server has no residency families, and its legacy gauge can show a free slot it does not have; requests
     * its scheduler deferred for the LoRA budget say its slots are full. Without that, the shorter queue (port 1)
     * would take a request for an adapter it does not hold and the request would wait there for a slot.
     */
    @Test
    void patchbaySendsANewAdapterPastAVllmServerThatDefersForTheLoraBudget() {
        EndpointState deferring = state(
                1,
                EndpointMetrics.builder()
                        .waitingRequests(2)
                        .runningRequests(4)
                        .kvCacheUsage(0.3)
                        .waitingDeferred(2)
                        .activeAdapters(Set.of("a"))
                        .maxLora(2)
                        .build());
        EndpointState notDeferring = state(
                2,
                EndpointMetrics.builder()
                        .waitingRequests(3)
                        .runningRequests(4)
                        .kvCacheUsage(0.3)
                        .waitingDeferred(0)
                        .activeAdapters(Set.of("a"))
                        .maxLora(2)
                        .build());
        PickResult pick = profile(Profiles.PATCHBAY).pick(SQL, List.of(deferring, notDeferring));
        assertThat(pick.best().endpoint().port()).isEqualTo(2);
        assertThat(profile(Profiles.PATCHBAY)
                        .pick(PickRequest.adapter("a"), List.of(deferring, notDeferring))
                        .best()
                        .endpoint()
                        .port())
                .as("the adapter running there still goes to the shorter queue")
                .isEqualTo(1);
    }

    /**
     * Patchbay's lora-spread: a hot adapter whose only home has a long queue, while another endpoint with a short
     * queue holds an adapter held elsewhere too, gets that endpoint drained for it once the overload has lasted; the
     * drain moves only as requests are sent, not as picks look.
     */
    @Test
    void patchbayDrainsASlotForAHotAdapterOnlyAsRequestsAreSent() {
        AtomicLong clock = new AtomicLong();
        EndpointPicker picker = Profiles.create(Profiles.PATCHBAY, new Random(1), clock::get);
        List<EndpointState> pool = List.of(
                state(
                        1,
                        EndpointMetrics.builder()
                                .waitingRequests(30)
                                .runningRequests(40)
                                .slots(1, 1)
                                .resident("sql", AdapterResidency.IN_SLOT)
                                .adapterRunning("sql", 40)
                                .adapterWaiting("sql", 30)
                                .build()),
                state(
                        2,
                        EndpointMetrics.builder()
                                .waitingRequests(0)
                                .runningRequests(2)
                                .slots(1, 1)
                                .resident("a", AdapterResidency.IN_SLOT)
                                .adapterRunning("a", 2)
                                .build()),
                state(
                        3,
                        EndpointMetrics.builder()
                                .waitingRequests(0)
                                .runningRequests(2)
                                .slots(1, 1)
                                .resident("a", AdapterResidency.IN_SLOT)
                                .adapterRunning("a", 2)
                                .build()));
        LoraSpreadFilter spread = (LoraSpreadFilter) picker.filters().getFirst();
        for (int i = 0; i < 10; i++) {
            clock.addAndGet(1_000_000_000L);
            picker.pick(SQL, pool); // only looking
        }
        assertThat(spread.drainsStarted()).as("picks alone start nothing").isZero();
        sendTo(picker, pool, 1);
        clock.addAndGet(3_000_000_000L); // past the persistence the overload must last
        sendTo(picker, pool, 1);
        assertThat(spread.drainsStarted()).isEqualTo(1);
        assertThat(spread.drains()).containsValue("a");
    }

    private static void sendTo(EndpointPicker picker, List<EndpointState> pool, int port) {
        EndpointState target = pool.stream()
                .filter(s -> s.endpoint().port() == port)
                .findFirst()
                .orElseThrow();
        picker.pick(SQL, pool);
        picker.preRequest(new Fixtures.SentRequest(SQL, pool, target));
    }
}
