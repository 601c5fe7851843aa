package dev.patchbay.router.pick;

import static dev.patchbay.router.pick.Fixtures.queue;
import static dev.patchbay.router.pick.Fixtures.state;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import dev.patchbay.router.scrape.LoraPlacement;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ScorersTest {
    private static final PickRequest SQL = PickRequest.adapter("sql");

    @Test
    void queueScoreIsLinearBetweenMinAndMax() {
        double[] scores = new QueueScorer().score(SQL, List.of(queue(1, 0, 0), queue(2, 5, 0), queue(3, 10, 0)));
        assertThat(scores).containsExactly(1.0, 0.5, 0.0);
    }

    @Test
    void queueScoreIsOneWhenAllEqual() {
        assertThat(new QueueScorer().score(SQL, List.of(queue(1, 4, 0), queue(2, 4, 0))))
                .containsExactly(1.0, 1.0);
    }

    @Test
    void queueScoreWithAMinimumSpreadKeepsSmallDifferencesSmall() {
        List<EndpointState> oneApart = List.of(queue(1, 0, 0), queue(2, 1, 0));
        assertThat(new QueueScorer().score(SQL, oneApart)).containsExactly(1.0, 0.0);
        assertThat(new QueueScorer(4).score(SQL, oneApart)).containsExactly(1.0, 0.75);
        assertThat(new QueueScorer(4).score(SQL, List.of(queue(1, 3, 0), queue(2, 13, 0), queue(3, 8, 0))))
                .containsExactly(1.0, 0.0, 0.5);
        assertThatThrownBy(() -> new QueueScorer(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Four slots: {@code hot} of them held by adapters with 40 requests running each, the others by adapters with
     * one; {@code queued} requests (one per adapter) wait for a slot.
     */
    private static EndpointState slotBound(int port, int hot, int queued) {
        EndpointMetrics.Builder b =
                EndpointMetrics.builder().slots(4, 4).waitingRequests(queued).runningRequests(40 * hot + 4 - hot);
        for (int i = 0; i < 4; i++) {
            b.resident("s" + port + "-" + i, AdapterResidency.IN_SLOT)
                    .adapterRunning("s" + port + "-" + i, i < hot ? 40 : 1);
        }
        for (int i = 0; i < queued; i++) {
            b.adapterWaiting("q" + port + "-" + i, 1);
        }
        return state(port, b.build());
    }

    @Test
    void withSlotTurnoverRequestsQueuedForASlotCountForMoreWhereFewerSlotsFree() {
        QueueScorer plain = new QueueScorer(0, false);
        QueueScorer turnover = new QueueScorer(0, true);
        // 1 and 2 both have 6 queued for a slot, but three of 2's slots are held by hot adapters: one slot turns over
        // there against four on 1, so its queue (the new request in it) counts four times, and 3's 12 are shorter.
        List<EndpointState> pool = List.of(slotBound(1, 0, 6), slotBound(2, 3, 6), slotBound(3, 0, 12));
        assertThat(plain.score(SQL, pool)).containsExactly(1.0, 1.0, 0.0);
        assertThat(QueueScorer.queueBehind(pool.get(1).metrics(), "sql")).isEqualTo(6 + (6 + 1) * 3);
        assertThat(QueueScorer.queueBehind(pool.get(0).metrics(), "sql"))
                .as("every slot turns over")
                .isEqualTo(6);
        double[] scores = turnover.score(SQL, pool);
        assertThat(scores[0]).isEqualTo(1.0);
        assertThat(scores[1]).isLessThan(scores[2]);
        // No slot that frees soon: counted as half a slot, so a finite but long queue.
        assertThat(QueueScorer.queueBehind(slotBound(4, 4, 0).metrics(), "sql")).isEqualTo(7);
        // The adapter's own slot, or its queue, is not waited for; base-model requests wait for no slot.
        String hotAdapter = "s2-0", queuedAdapter = "q2-0";
        assertThat(QueueScorer.queueBehind(pool.get(1).metrics(), hotAdapter)).isEqualTo(6);
        assertThat(QueueScorer.queueBehind(pool.get(1).metrics(), queuedAdapter))
                .isEqualTo(6);
        assertThat(turnover.score(PickRequest.baseModel("base"), pool)).containsExactly(plain.score(SQL, pool));
    }

    /** An endpoint with these adapters in slots (4 slots), idle. */
    private static EndpointState slots(int port, String... adapters) {
        EndpointMetrics.Builder b = EndpointMetrics.builder().slots(4, adapters.length);
        for (String a : adapters) {
            b.resident(a, new AdapterResidency(true, false, 8));
        }
        return Fixtures.state(port, b.build());
    }

    @Test
    void bridgeScorePrefersAGroupTheHoldersDoNotReachYet() {
        // 1 holds h2 and shares h1 with 2: one group {1, 2}. 3 holds c alone, 4 holds nothing.
        List<EndpointState> pool = List.of(slots(1, "h1", "h2"), slots(2, "h1"), slots(3, "c"), slots(4));
        assertThat(new LoraBridgeScorer().score(PickRequest.adapter("h2"), pool))
                .containsExactly(1.0, 0.0, 1.0, 1.0);
        // A chain reaches further: 5 shares c with 3, and 3 now shares h1 with 2, so 3 and 5 are in h2's group.
        List<EndpointState> chained =
                List.of(slots(1, "h1", "h2"), slots(2, "h1"), slots(3, "c", "h1"), slots(5, "c"), slots(4));
        assertThat(new LoraBridgeScorer().score(PickRequest.adapter("h2"), chained))
                .containsExactly(1.0, 0.0, 0.0, 0.0, 1.0);
    }

    @Test
    void bridgeScoreIsNeutralWithOneGroupNoHolderOrABaseModel() {
        List<EndpointState> oneGroup = List.of(slots(1, "a", "b"), slots(2, "b", "c"), slots(3, "c"));
        assertThat(new LoraBridgeScorer().score(PickRequest.adapter("a"), oneGroup))
                .containsExactly(1.0, 1.0, 1.0);
        List<EndpointState> twoGroups = List.of(slots(1, "a"), slots(2, "b"));
        assertThat(new LoraBridgeScorer().score(PickRequest.adapter("new"), twoGroups))
                .containsExactly(1.0, 1.0);
        assertThat(new LoraBridgeScorer().score(PickRequest.baseModel("base"), twoGroups))
                .containsExactly(1.0, 1.0);
    }

    private static EndpointState inFlight(int port, long promptTokens) {
        return new EndpointState(new Endpoint("127.0.0.1", port), EndpointMetrics.EMPTY, promptTokens);
    }

    @Test
    void prefillQueueScoreSpreadsPromptTokensInFlight() {
        // a 4,000-token difference spans the whole score; 500 tokens, under the minimum spread, only part of it
        assertThat(new PrefillQueueScorer().score(SQL, List.of(inFlight(1, 0), inFlight(2, 4000), inFlight(3, 2000))))
                .containsExactly(1.0, 0.0, 0.5);
        assertThat(new PrefillQueueScorer().score(SQL, List.of(inFlight(1, 700), inFlight(2, 200))))
                .containsExactly(1.0 - 500.0 / PrefillQueueScorer.DEFAULT_MIN_SPREAD_TOKENS, 1.0);
        assertThat(new PrefillQueueScorer(100).score(SQL, List.of(inFlight(1, 50), inFlight(2, 50))))
                .containsExactly(1.0, 1.0);
        assertThatThrownBy(() -> new PrefillQueueScorer(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> inFlight(1, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void prefillQueueScoresOnlyWhereTheAdapterIsPlacedBest() {
        EndpointMetrics inHost = EndpointMetrics.builder()
                .slots(4, 1)
                .resident("sql", AdapterResidency.IN_HOST)
                .resident("x", AdapterResidency.IN_SLOT)
                .adapterRunning("x", 2)
                .build();
        EndpointMetrics freeSlot = EndpointMetrics.builder().slots(4, 0).build();
        List<EndpointState> states = List.of(
                new EndpointState(new Endpoint("127.0.0.1", 1), inHost, 2000),
                new EndpointState(new Endpoint("127.0.0.1", 2), freeSlot, 0),
                new EndpointState(new Endpoint("127.0.0.1", 3), inHost, 1000));
        // the idle free slot would need a load from storage: prefill work is no reason to pay one
        assertThat(new PrefillQueueScorer().score(SQL, states)).containsExactly(0.0, 0.0, 0.5);
        // a base-model request needs no adapter: every endpoint counts
        assertThat(new PrefillQueueScorer().score(PickRequest.baseModel("base"), states))
                .containsExactly(0.0, 1.0, 0.5);
    }

    @Test
    void patchbayPrefersTheHolderWithLessPrefillButNeverLeavesTheSlotForIt() {
        EndpointPicker patchbay = Profiles.create(Profiles.PATCHBAY, new Random(1));
        EndpointMetrics holds = EndpointMetrics.builder()
                .kvCacheUsage(0.5)
                .slots(4, 1)
                .resident("sql", new AdapterResidency(true, false, 8))
                .adapterRunning("sql", 3)
                .build();
        EndpointMetrics freeSlot =
                EndpointMetrics.builder().kvCacheUsage(0.5).slots(4, 0).build();
        EndpointState busyHolder = new EndpointState(new Endpoint("127.0.0.1", 1), holds, 3000);
        EndpointState idleHolder = new EndpointState(new Endpoint("127.0.0.1", 2), holds, 0);
        assertThat(patchbay.pick(SQL, List.of(busyHolder, idleHolder))
                        .best()
                        .endpoint()
                        .port())
                .isEqualTo(2);
        // an endpoint without the adapter, with nothing in flight, still loses to a busy holder
        EndpointState emptyNonHolder = new EndpointState(new Endpoint("127.0.0.1", 3), freeSlot, 0);
        assertThat(patchbay.pick(SQL, List.of(busyHolder, emptyNonHolder))
                        .best()
                        .endpoint()
                        .port())
                .isEqualTo(1);
    }

    @Test
    void kvCacheScoreIsOneMinusUsage() {
        assertThat(new KvCacheScorer()
                        .score(SQL, List.of(queue(1, 0, 0.25), queue(2, 0, 1.0), queue(3, 0, Double.NaN))))
                .containsExactly(0.75, 0.0, 0.0);
    }

    private static EndpointMetrics legacy(Set<String> active, Set<String> waiting, int maxLora) {
        return EndpointMetrics.builder()
                .activeAdapters(active)
                .waitingAdapters(waiting)
                .maxLora(maxLora)
                .build();
    }

    @Test
    void loraAffinityFollowsTheGatewayConstants() {
        assertThat(LoraAffinityScorer.score(legacy(Set.of("sql", "a", "b"), Set.of(), 3), "sql", false))
                .isEqualTo(LoraAffinityScorer.ACTIVE)
                .isEqualTo(1.0);
        assertThat(LoraAffinityScorer.score(legacy(Set.of("a"), Set.of("sql"), 3), "sql", false))
                .isEqualTo(LoraAffinityScorer.HAS_CAPACITY)
                .isEqualTo(0.8);
        assertThat(LoraAffinityScorer.score(legacy(Set.of("a", "b"), Set.of("sql"), 3), "sql", false))
                .isEqualTo(LoraAffinityScorer.WAITING)
                .isEqualTo(0.6);
        assertThat(LoraAffinityScorer.score(legacy(Set.of("a", "b", "c"), Set.of(), 3), "sql", false))
                .isEqualTo(LoraAffinityScorer.NONE)
                .isEqualTo(0.0);
    }

    @Test
    void loraAffinityCountsBothListsAsLlmdsReleasedPickerDoes() {
        // vLLM writes the same names into both labels: llm-d v0.9.2 sums the lengths, so two adapters look like four.
        assertThat(LoraAffinityScorer.score(legacy(Set.of("a", "b"), Set.of("a", "b"), 3), "sql", false))
                .isEqualTo(LoraAffinityScorer.NONE);
        assertThat(LoraAffinityScorer.score(legacy(Set.of("a"), Set.of("a"), 3), "sql", false))
                .isEqualTo(LoraAffinityScorer.HAS_CAPACITY);
        assertThat(LoraAffinityScorer.score(legacy(Set.of("a", "b"), Set.of("a", "sql"), 3), "sql", false))
                .isEqualTo(LoraAffinityScorer.WAITING);
        // The scorer a profile builds without parameters is the released one.
        double[] released = new LoraAffinityScorer()
                .score(PickRequest.adapter("sql"), List.of(state(1, legacy(Set.of("a", "b"), Set.of("a", "b"), 3))));
        assertThat(released).containsExactly(LoraAffinityScorer.NONE);
    }

    @Test
    void loraAffinityWithDistinctAdaptersCountsEachOnceAsPr2625Describes() {
        // Two adapters in flight, not four, leave a third slot spare.
        assertThat(LoraAffinityScorer.score(legacy(Set.of("a", "b"), Set.of("a", "b"), 3), "sql", true))
                .isEqualTo(LoraAffinityScorer.HAS_CAPACITY);
        assertThat(LoraAffinityScorer.score(legacy(Set.of("a", "b", "sql"), Set.of("a", "b", "sql"), 3), "sql", true))
                .isEqualTo(LoraAffinityScorer.ACTIVE);
        assertThat(LoraAffinityScorer.score(legacy(Set.of("a", "b", "c"), Set.of("a", "b", "c"), 3), "sql", true))
                .isEqualTo(LoraAffinityScorer.NONE);
        // A base-model request is scored like any name on no list: spare capacity or nothing.
        double[] base = new LoraAffinityScorer(true)
                .score(
                        PickRequest.baseModel("base-8b"),
                        List.of(
                                state(1, legacy(Set.of("a"), Set.of("a"), 3)),
                                state(2, legacy(Set.of("a", "b", "c"), Set.of(), 3))));
        assertThat(base).containsExactly(LoraAffinityScorer.HAS_CAPACITY, LoraAffinityScorer.NONE);
    }

    @Test
    void loraAffinityIgnoresResidencyFamilies() {
        EndpointMetrics onlyResident = EndpointMetrics.builder()
                .maxLora(1)
                .activeAdapters(Set.of("a"))
                .slots(4, 1)
                .resident("sql", AdapterResidency.IN_SLOT)
                .build();
        assertThat(LoraAffinityScorer.score(onlyResident, "sql", false)).isEqualTo(LoraAffinityScorer.NONE);
    }

    /** One endpoint for each placement, built from the new families. */
    static List<EndpointState> onePerPlacement() {
        return List.of(
                state(
                        1,
                        EndpointMetrics.builder()
                                .slots(2, 2)
                                .resident("sql", AdapterResidency.IN_SLOT)
                                .resident("a", AdapterResidency.IN_SLOT)
                                .adapterRunning("a", 3)
                                .build()),
                state(
                        2,
                        EndpointMetrics.builder()
                                .slots(2, 2)
                                .resident("sql", AdapterResidency.IN_HOST)
                                .resident("a", AdapterResidency.IN_SLOT)
                                .resident("b", AdapterResidency.IN_SLOT)
                                .adapterRunning("a", 1)
                                .build()),
                state(
                        3,
                        EndpointMetrics.builder()
                                .slots(2, 1)
                                .resident("a", AdapterResidency.IN_SLOT)
                                .adapterRunning("a", 1)
                                .build()),
                state(
                        4,
                        EndpointMetrics.builder()
                                .slots(2, 2)
                                .resident("a", AdapterResidency.IN_SLOT)
                                .resident("b", AdapterResidency.IN_SLOT)
                                .adapterRunning("a", 1)
                                .build()),
                state(
                        5,
                        EndpointMetrics.builder()
                                .slots(2, 2)
                                .resident("a", AdapterResidency.IN_SLOT)
                                .resident("b", AdapterResidency.IN_SLOT)
                                .adapterRunning("a", 1)
                                .adapterWaiting("b", 1)
                                .build()));
    }

    @Test
    void placementsFollowTheResidencyOrder() {
        assertThat(onePerPlacement().stream()
                        .map(s -> LoraPlacement.of(s.metrics(), "sql"))
                        .toList())
                .containsExactly(
                        LoraPlacement.IN_SLOT,
                        LoraPlacement.IN_HOST,
                        LoraPlacement.FREE_SLOT,
                        LoraPlacement.IDLE_SLOT,
                        LoraPlacement.ALL_SLOTS_BUSY);
    }

    @Test
    void residencyScoresUseTheirConstantsInStrictOrder() {
        double[] scores = new LoraResidencyScorer().score(SQL, onePerPlacement());
        ResidencyScores d = ResidencyScores.DEFAULT;
        assertThat(scores).containsExactly(d.inSlot(), d.inHost(), d.freeSlot(), d.idleSlot(), d.allSlotsBusy());
        for (int i = 1; i < scores.length; i++) {
            assertThat(scores[i]).isLessThan(scores[i - 1]);
        }
    }

    @Test
    void residencyScoresAreConfigurable() {
        ResidencyScores custom = new ResidencyScores(0.9, 0.5, 0.4, 0.2, 0.1);
        assertThat(new LoraResidencyScorer(custom).score(SQL, onePerPlacement()))
                .containsExactly(0.9, 0.5, 0.4, 0.2, 0.1);
        assertThatThrownBy(() -> new ResidencyScores(0.5, 0.7, 0.4, 0.2, 0.1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anAdapterWaitingWhereASlotCanBeHadIsLoadingAndScoresAsInASlot() {
        EndpointMetrics idleSlot = EndpointMetrics.builder()
                .slots(2, 2)
                .resident("a", AdapterResidency.IN_SLOT)
                .resident("b", AdapterResidency.IN_SLOT)
                .adapterRunning("a", 1)
                .adapterWaiting("sql", 1)
                .build();
        EndpointMetrics freeSlot = EndpointMetrics.builder()
                .slots(2, 1)
                .resident("a", AdapterResidency.IN_SLOT)
                .adapterWaiting("sql", 2)
                .build();
        EndpointMetrics inHost = EndpointMetrics.builder()
                .slots(2, 2)
                .resident("sql", AdapterResidency.IN_HOST)
                .resident("a", AdapterResidency.IN_SLOT)
                .resident("b", AdapterResidency.IN_SLOT)
                .adapterWaiting("sql", 1)
                .build();
        assertThat(List.of(idleSlot, freeSlot, inHost))
                .extracting(m -> LoraPlacement.of(m, "sql"))
                .containsOnly(LoraPlacement.LOADING);
        assertThat(new LoraResidencyScorer().score(SQL, List.of(state(1, idleSlot), state(2, freeSlot))))
                .containsExactly(ResidencyScores.DEFAULT.inSlot(), ResidencyScores.DEFAULT.inSlot());
    }

    @Test
    void requestsWaitingForASlotToFreeAreQueuedAndANewOneJoinsThemRatherThanLoadingASecondCopy() {
        // Every slot busy: sql's requests wait until one frees, and the next one for sql waits with them for the
        // same load; anywhere else it would queue for a slot too and the fleet would load sql twice.
        EndpointMetrics queued = EndpointMetrics.builder()
                .waitingRequests(3)
                .slots(2, 2)
                .resident("a", AdapterResidency.IN_SLOT)
                .resident("b", AdapterResidency.IN_SLOT)
                .adapterRunning("a", 1)
                .adapterRunning("b", 1)
                .adapterWaiting("sql", 3)
                .build();
        EndpointMetrics busy = EndpointMetrics.builder()
                .slots(2, 2)
                .resident("c", AdapterResidency.IN_SLOT)
                .resident("d", AdapterResidency.IN_SLOT)
                .adapterRunning("c", 1)
                .adapterRunning("d", 1)
                .build();
        assertThat(LoraPlacement.of(queued, "sql")).isEqualTo(LoraPlacement.QUEUED);
        assertThat(new LoraResidencyScorer().score(SQL, List.of(state(1, queued), state(2, busy))))
                .containsExactly(ResidencyScores.DEFAULT.inSlot(), ResidencyScores.DEFAULT.allSlotsBusy());
        assertThat(new LoraCapacityFilter().filter(SQL, List.of(state(1, queued), state(2, busy))))
                .extracting(st -> st.endpoint().port())
                .containsExactly(1);
        // An adapter queued behind another adapter's claim on the one idle slot is queued too.
        EndpointMetrics behind = EndpointMetrics.builder()
                .slots(2, 2)
                .resident("a", AdapterResidency.IN_SLOT)
                .resident("b", AdapterResidency.IN_SLOT)
                .adapterRunning("a", 1)
                .adapterWaiting("x", 1)
                .adapterWaiting("sql", 1)
                .build();
        assertThat(LoraPlacement.of(behind, "sql")).isEqualTo(LoraPlacement.QUEUED);
    }

    @Test
    void slotsThatAdaptersQueueForAreNotFreeForANewAdapter() {
        // One slot free, but x queues for it: a new adapter would wait behind x.
        EndpointMetrics freeButClaimed = EndpointMetrics.builder()
                .slots(2, 1)
                .resident("a", AdapterResidency.IN_SLOT)
                .adapterRunning("a", 1)
                .adapterWaiting("x", 1)
                .build();
        // One slot free and one held by idle b: x takes the free one, b's is still to be had.
        EndpointMetrics idleLeft = EndpointMetrics.builder()
                .slots(3, 2)
                .resident("a", AdapterResidency.IN_SLOT)
                .resident("b", AdapterResidency.IN_SLOT)
                .adapterRunning("a", 1)
                .adapterWaiting("x", 1)
                .build();
        // Two free slots, one claimed by x: one is still free.
        EndpointMetrics oneFreeLeft = EndpointMetrics.builder()
                .slots(3, 1)
                .resident("a", AdapterResidency.IN_SLOT)
                .adapterRunning("a", 1)
                .adapterWaiting("x", 1)
                .build();
        assertThat(List.of(freeButClaimed, idleLeft, oneFreeLeft))
                .extracting(m -> LoraPlacement.of(m, "sql"))
                .containsExactly(LoraPlacement.ALL_SLOTS_BUSY, LoraPlacement.IDLE_SLOT, LoraPlacement.FREE_SLOT);
        EndpointMetrics inHostButClaimed = EndpointMetrics.builder()
                .slots(2, 1)
                .resident("a", AdapterResidency.IN_SLOT)
                .resident("sql", AdapterResidency.IN_HOST)
                .adapterRunning("a", 1)
                .adapterWaiting("x", 1)
                .build();
        assertThat(LoraPlacement.of(inHostButClaimed, "sql")).isEqualTo(LoraPlacement.ALL_SLOTS_BUSY);
        assertThat(LoraPlacement.of(inHostButClaimed, "x"))
                .as("x itself has the slot")
                .isEqualTo(LoraPlacement.LOADING);
    }

    @Test
    void pinnedIdleAdaptersAreNotCheapToEvict() {
        EndpointMetrics pinned = EndpointMetrics.builder()
                .slots(1, 1)
                .resident("a", new AdapterResidency(true, true, 8))
                .build();
        assertThat(LoraPlacement.of(pinned, "sql")).isEqualTo(LoraPlacement.ALL_SLOTS_BUSY);
    }

    @Test
    void hostResidentAdapterBehindBusySlotsWaitsLikeAnyOther() {
        EndpointMetrics m = EndpointMetrics.builder()
                .slots(1, 1)
                .resident("sql", AdapterResidency.IN_HOST)
                .resident("a", AdapterResidency.IN_SLOT)
                .adapterRunning("a", 2)
                .build();
        assertThat(LoraPlacement.of(m, "sql")).isEqualTo(LoraPlacement.ALL_SLOTS_BUSY);
    }

    @Test
    void legacyOnlyEndpointsFallBackOnActivity() {
        assertThat(LoraPlacement.of(legacy(Set.of("sql"), Set.of(), 2), "sql")).isEqualTo(LoraPlacement.IN_SLOT);
        assertThat(LoraPlacement.of(legacy(Set.of("a", "b"), Set.of("sql"), 2), "sql"))
                .isEqualTo(LoraPlacement.IN_HOST);
        assertThat(LoraPlacement.of(legacy(Set.of("a"), Set.of(), 2), "sql")).isEqualTo(LoraPlacement.FREE_SLOT);
        assertThat(LoraPlacement.of(legacy(Set.of("a"), Set.of("b"), 2), "sql"))
                .isEqualTo(LoraPlacement.ALL_SLOTS_BUSY);
        assertThat(LoraPlacement.of(EndpointMetrics.EMPTY, "sql")).isEqualTo(LoraPlacement.FREE_SLOT);
    }

    @Test
    void legacyOnlyEndpointsDeferringForTheLoraBudgetHaveNoSlotForANewAdapter() {
        EndpointMetrics deferring = EndpointMetrics.builder()
                .activeAdapters(Set.of("a"))
                .waitingAdapters(Set.of("b"))
                .maxLora(4)
                .waitingDeferred(3)
                .build();
        assertThat(LoraPlacement.of(deferring, "sql")).isEqualTo(LoraPlacement.ALL_SLOTS_BUSY);
        assertThat(LoraPlacement.of(deferring, "a")).isEqualTo(LoraPlacement.IN_SLOT);
        assertThat(LoraPlacement.of(deferring, "b")).isEqualTo(LoraPlacement.IN_HOST);
        EndpointMetrics withoutLegacyGauge =
                EndpointMetrics.builder().waitingDeferred(1).build();
        assertThat(LoraPlacement.of(withoutLegacyGauge, "sql")).isEqualTo(LoraPlacement.ALL_SLOTS_BUSY);
        EndpointMetrics noneDeferred = EndpointMetrics.builder()
                .activeAdapters(Set.of("a"))
                .maxLora(4)
                .waitingDeferred(0)
                .build();
        assertThat(LoraPlacement.of(noneDeferred, "sql")).isEqualTo(LoraPlacement.FREE_SLOT);
        // The residency families, where present, decide alone.
        EndpointMetrics resident = EndpointMetrics.builder()
                .slots(2, 1)
                .resident("a", AdapterResidency.IN_SLOT)
                .adapterRunning("a", 1)
                .waitingDeferred(2)
                .build();
        assertThat(LoraPlacement.of(resident, "sql")).isEqualTo(LoraPlacement.FREE_SLOT);
    }

    @Test
    void baseModelRequestsScoreLoraNeutrally() {
        PickRequest base = PickRequest.baseModel("base-8b");
        List<EndpointState> states = onePerPlacement();
        double[] residency = new LoraResidencyScorer().score(base, states);
        assertThat(residency).containsOnly(residency[0]);
    }

    @Test
    void capacityFilterKeepsRequestsAwayFromBusySlotsHoweverBackloggedTheHolders() {
        // Sent where every slot is busy with adapters that always have a request, it would wait until arrivals stop.
        LoraCapacityFilter filter = new LoraCapacityFilter();
        EndpointState backloggedHolder = state(
                1,
                EndpointMetrics.builder()
                        .waitingRequests(200)
                        .slots(2, 2)
                        .resident("sql", AdapterResidency.IN_SLOT)
                        .resident("a", AdapterResidency.IN_SLOT)
                        .adapterRunning("a", 1)
                        .adapterRunning("sql", 5)
                        .adapterWaiting("sql", 200)
                        .build());
        EndpointState busyElsewhere = state(
                2,
                EndpointMetrics.builder()
                        .waitingRequests(2)
                        .slots(2, 2)
                        .resident("a", AdapterResidency.IN_SLOT)
                        .resident("b", AdapterResidency.IN_SLOT)
                        .adapterRunning("a", 1)
                        .adapterRunning("b", 1)
                        .build());
        assertThat(Fixtures.ports(filter.filter(SQL, List.of(backloggedHolder, busyElsewhere))))
                .containsExactly(1);
        // An endpoint with a free slot stays beside the holder, however long its queue.
        EndpointState freeSlot = state(
                3,
                EndpointMetrics.builder()
                        .waitingRequests(30)
                        .slots(2, 1)
                        .resident("a", AdapterResidency.IN_SLOT)
                        .adapterRunning("a", 1)
                        .build());
        assertThat(Fixtures.ports(filter.filter(SQL, List.of(backloggedHolder, busyElsewhere, freeSlot))))
                .containsExactly(1, 3);
    }

    @Test
    void capacityFilterDropsBusyEndpointsUnlessAllAreBusy() {
        List<EndpointState> states = onePerPlacement();
        LoraCapacityFilter filter = new LoraCapacityFilter();
        assertThat(Fixtures.ports(filter.filter(SQL, states))).containsExactly(1, 2, 3, 4);
        List<EndpointState> onlyBusy = List.of(states.get(4));
        assertThat(filter.filter(SQL, onlyBusy)).isEqualTo(onlyBusy);
        assertThat(filter.filter(PickRequest.baseModel("b"), states)).isEqualTo(states);
    }
}
