package dev.patchbay.bench.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.pick.Profiles;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Small fleets over short virtual runs: determinism, conservation, round-robin balance. */
class FleetSimulatorTest {
    private static final long SECOND = 1_000_000_000L;

    /** The gie-multilora popularity on 3 replicas; 20 s of arrivals at 15 req/s. */
    private static SimSettings small() {
        return SimSettings.defaults(Workload.gieMultilora().withSizing(null, null, 3), 20 * SECOND);
    }

    private static Trace trace(SimSettings s, double rate, long seed) {
        return Trace.generate(
                s.workload(),
                rate,
                s.durationNanos(),
                Arrivals.POISSON,
                Trace.Lengths.SHAREGPT_LIKE,
                s.maxModelLen(),
                seed);
    }

    private static RunResult run(SimSettings s, String policy, Trace trace, long seed) {
        try (FleetSimulator sim = new FleetSimulator(s)) {
            return sim.run(policy, trace, 15, seed, f -> {});
        }
    }

    @Test
    void sameSeedGivesTheSameNumbers() {
        SimSettings s = small();
        RunResult first = run(s, Profiles.PATCHBAY, trace(s, 15, 3), 3);
        RunResult second = run(s, Profiles.PATCHBAY, trace(s, 15, 3), 3);
        assertThat(second.withoutWallTime()).isEqualTo(first.withoutWallTime());

        RunResult otherSeed = run(s, Profiles.PATCHBAY, trace(s, 15, 4), 4);
        assertThat(otherSeed.withoutWallTime()).isNotEqualTo(first.withoutWallTime());
    }

    @Test
    void placementAndSeveralRoutersLoseNoRequestAndRepeat() {
        SimSettings s = small();
        Trace trace = trace(s, 15, 6);
        for (String policy : List.of(SimPolicy.PATCHBAY_PLACEMENT, SimPolicy.DYNAMO_HRW, SimPolicy.DYNAMO_MCF)) {
            for (int routers : new int[] {1, 3}) {
                RunResult first = runWithRouters(s, policy, trace, routers);
                assertThat(first.completed()).as(policy + " " + routers).isEqualTo(trace.size());
                assertThat(first.placementDisagreement()).isBetween(0.0, 1.0);
                if (routers == 1) assertThat(first.placementDisagreement()).isZero();
                assertThat(runWithRouters(s, policy, trace, routers).withoutWallTime())
                        .isEqualTo(first.withoutWallTime());
            }
        }
        // Requests from the first instant on find every router ready (each reads the servers before its first round).
        Trace early = Trace.generate(
                s.workload(), 1000, SECOND / 5, Arrivals.POISSON, Trace.Lengths.SHAREGPT_LIKE, s.maxModelLen(), 7);
        // The fourth request goes to the fourth router before that router's first round (at 3/4 of an interval).
        assertThat(early.arrivalNanos()[3]).isLessThan(s.scrapeNanos() * 3 / 4);
        assertThat(runWithRouters(s, Profiles.PATCHBAY, early, 4).failed()).isZero();
        // Patchbay's own placement loads the hot adapters' homes ahead of demand; Dynamo's only routes.
        assertThat(runWithRouters(s, SimPolicy.PATCHBAY_PLACEMENT, trace, 1).placementLoads())
                .isPositive();
        assertThat(runWithRouters(s, SimPolicy.DYNAMO_MCF, trace, 1).placementLoads())
                .isZero();
    }

    @Test
    void severalRoutersHoldAgainTheRequestsAServerRefusesForWantOfASlot() {
        // zipf-1000 at its operating rate: 1,000 adapters for 40 slots, requests wait for slots.
        SimSettings s = SimSettings.defaults(Workload.zipf(1000, 1.1), 20 * SECOND);
        Trace trace = trace(s, 30, 8);
        RunResult four = runWithRouters(s, Profiles.PATCHBAY, trace, 4);
        assertThat(four.completed()).isEqualTo(trace.size());
        assertThat(four.slotRefusals())
                .as("a slot one router's page shows free another router's request took")
                .isPositive();
        assertThat(runWithRouters(s, Profiles.PATCHBAY, trace, 4).withoutWallTime())
                .isEqualTo(four.withoutWallTime());
        assertThat(runWithRouters(s, Profiles.GIE_LORA, trace, 4).slotRefusals())
                .as("without slot wait nothing asks for a slot")
                .isZero();
    }

    private static RunResult runWithRouters(SimSettings s, String policy, Trace trace, int routers) {
        try (FleetSimulator sim = new FleetSimulator(s, FleetSimulator.ScrapePath.SNAPSHOT, null, routers)) {
            return sim.run(policy, trace, 15, 6, f -> {});
        }
    }

    @Test
    void everyRequestFinishesWithAllItsTokensUnderEveryPolicy() {
        SimSettings s = small();
        Trace trace = trace(s, 15, 5);
        long expectedTokens = Arrays.stream(trace.outputTokens()).asLongStream().sum();
        for (String policy : Profiles.NAMES) {
            RunResult r = run(s, policy, trace, 5);
            assertThat(r.requests()).as(policy).isEqualTo(trace.size());
            assertThat(r.completed() + r.failed() + r.unfinished()).as(policy).isEqualTo(r.requests());
            assertThat(r.completed()).as(policy).isEqualTo(trace.size());
            assertThat(r.outputTokens()).as(policy).isEqualTo(expectedTokens);
            assertThat(r.requestsPerReplica().stream()
                            .mapToInt(Integer::intValue)
                            .sum())
                    .as(policy)
                    .isEqualTo(trace.size());
            assertThat(r.ttftP50()).as(policy).isPositive().isLessThanOrEqualTo(r.ttftP99());
            assertThat(r.loadsIntoSlots()).as(policy).isGreaterThanOrEqualTo(r.loadsFromStorage());
        }
    }

    @Test
    void aRunCutShortCountsTheRequestsItDidNotFinish() {
        SimSettings s = small().withDrain(0);
        Trace trace = trace(s, 15, 6);
        RunResult r = run(s, Profiles.ROUND_ROBIN, trace, 6);
        assertThat(r.unfinished()).isPositive();
        assertThat(r.completed() + r.failed() + r.unfinished()).isEqualTo(trace.size());
    }

    @Test
    void roundRobinSpreadsRequestsEvenly() {
        SimSettings s = small();
        Trace trace = trace(s, 15, 8);
        RunResult r = run(s, Profiles.ROUND_ROBIN, trace, 8);
        int min = r.requestsPerReplica().stream()
                .mapToInt(Integer::intValue)
                .min()
                .orElseThrow();
        int max = r.requestsPerReplica().stream()
                .mapToInt(Integer::intValue)
                .max()
                .orElseThrow();
        assertThat(r.requestsPerReplica()).hasSize(3);
        assertThat(max - min).isLessThanOrEqualTo(1);
    }

    @Test
    void patchbayLoadsFewerAdaptersFromStorageThanRoundRobin() {
        SimSettings s = small();
        Trace trace = trace(s, 15, 9);
        RunResult patchbay = run(s, Profiles.PATCHBAY, trace, 9);
        RunResult roundRobin = run(s, Profiles.ROUND_ROBIN, trace, 9);
        assertThat(patchbay.loadsFromStorage()).isLessThan(roundRobin.loadsFromStorage());
        assertThat(patchbay.slotHitShare()).isGreaterThan(roundRobin.slotHitShare());
    }
}
