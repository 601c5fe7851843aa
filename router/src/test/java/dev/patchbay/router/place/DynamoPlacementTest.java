package dev.patchbay.router.place;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.Rendezvous;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class DynamoPlacementTest {
    @Test
    void replicaCountsFollowDynamosRule() {
        // 6 slots, 3 servers: ceil(share * 6) = 4 (capped at 3), 2, 1, 1: 7 > 6, so scaled by 6/7 and floored at 1
        // (2.57 -> 2, 1.71 -> 1, 0.86 -> 1, 0.86 -> 1 = 5), the leftover slot to the largest remainder, b's.
        Map<String, Integer> counts =
                DynamoPlacement.replicaCounts(Map.of("a", 5.0, "b", 2.5, "c", 1.0, "d", 1.0), 6, 3);
        assertThat(counts).containsExactlyInAnyOrderEntriesOf(Map.of("a", 2, "b", 2, "c", 1, "d", 1));
    }

    @Test
    void onlyAsManyAdaptersAsSlotsGetReplicas() {
        Map<String, Double> rates = Map.of("a", 5.0, "b", 4.0, "c", 3.0, "d", 2.0);
        assertThat(DynamoPlacement.replicaCounts(rates, 2, 2)).containsOnlyKeys("a", "b");
    }

    @Test
    void hrwKeepsAnAdapterOnItsPreviousHomes() {
        // Five adapters alike on five one-slot servers: one home each; "a" is placed first (by name).
        FleetState fleet = Fleets.empty(5, 1);
        Map<String, Double> rates = Map.of("a", 1.0, "b", 1.0, "c", 1.0, "d", 1.0, "e", 1.0);
        Map<String, List<Endpoint>> fresh = new DynamoPlacement(DynamoPlacement.Mode.HRW).plan(rates, fleet, Map.of());
        assertThat(fresh.get("a")).containsExactly(Rendezvous.first("a", fleet.endpoints()));
        List<Endpoint> elsewhere = new ArrayList<>(fleet.endpoints());
        elsewhere.removeAll(fresh.get("a"));
        Map<String, List<Endpoint>> prior = Map.of("a", List.of(elsewhere.getFirst()));

        assertThat(new DynamoPlacement(DynamoPlacement.Mode.HRW).plan(rates, fleet, prior))
                .containsEntry("a", List.of(elsewhere.getFirst()));
    }

    @Test
    void idleAdaptersTheFleetHoldsGetTheirRendezvousHome() {
        FleetState fleet = Fleets.holding(Fleets.empty(3, 2), 2, Fleets.inHost("cold"), Map.of());
        for (DynamoPlacement.Mode mode : DynamoPlacement.Mode.values()) {
            Map<String, List<Endpoint>> homes = new DynamoPlacement(mode).plan(Map.of("hot", 1.0), fleet, Map.of());
            assertThat(homes.get("cold")).containsExactly(Rendezvous.first("cold", fleet.endpoints()));
        }
    }

    @Test
    void mcfFindsTheCheapestAssignmentThatFits() {
        Random random = new Random(17);
        for (int trial = 0; trial < 200; trial++) {
            int adapters = 1 + random.nextInt(3);
            int servers = 1 + random.nextInt(3);
            int[] demand = new int[adapters];
            int[] capacity = new int[servers];
            long[][] cost = new long[adapters][servers];
            for (int l = 0; l < adapters; l++) {
                demand[l] = 1 + random.nextInt(servers);
                for (int w = 0; w < servers; w++) cost[l][w] = random.nextInt(2000) - 500;
            }
            for (int w = 0; w < servers; w++) capacity[w] = random.nextInt(3);
            int[][] flow = MinCostFlow.assign(demand, capacity, cost);
            long[] best = bruteForce(demand, capacity, cost);
            assertThat(new long[] {placed(flow), total(flow, cost)})
                    .as("trial %d", trial)
                    .containsExactly(best);
        }
    }

    private static long placed(int[][] flow) {
        long n = 0;
        for (int[] row : flow) for (int f : row) n += f;
        return n;
    }

    private static long total(int[][] flow, long[][] cost) {
        long c = 0;
        for (int l = 0; l < flow.length; l++) for (int w = 0; w < flow[l].length; w++) c += flow[l][w] * cost[l][w];
        return c;
    }

    /** Most replicas placed, then least cost, over every 0/1 assignment within demand and capacity. */
    private static long[] bruteForce(int[] demand, int[] capacity, long[][] cost) {
        int adapters = demand.length, servers = capacity.length, cells = adapters * servers;
        long bestPlaced = -1, bestCost = Long.MAX_VALUE;
        for (int mask = 0; mask < 1 << cells; mask++) {
            int[] perAdapter = new int[adapters], perServer = new int[servers];
            long c = 0, n = 0;
            for (int i = 0; i < cells; i++) {
                if ((mask >> i & 1) == 0) continue;
                int l = i / servers, w = i % servers;
                perAdapter[l]++;
                perServer[w]++;
                c += cost[l][w];
                n++;
            }
            boolean fits = true;
            for (int l = 0; l < adapters; l++) fits &= perAdapter[l] <= demand[l];
            for (int w = 0; w < servers; w++) fits &= perServer[w] <= capacity[w];
            if (fits && (n > bestPlaced || n == bestPlaced && c < bestCost)) {
                bestPlaced = n;
                bestCost = c;
            }
        }
        return new long[] {bestPlaced, bestCost};
    }
}
