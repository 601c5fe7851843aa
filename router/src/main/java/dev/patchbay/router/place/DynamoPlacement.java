package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.Rendezvous;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * NVIDIA Dynamo's LoRA allocation as its controller publishes it (ai-dynamo/dynamo, {@code lib/llm/src/lora}), to
 * measure Patchbay's placement against. Replica counts: the active adapters (any arrivals in the rate window), at most
 * as many as the fleet has slots, highest load first, each get {@code ceil(share * slots)}, at least 1 and at most the
 * server count; when that overshoots the slots, counts are scaled down, floored at 1, and the leftover slots go by
 * largest remainder (ties by name). A count falls only after {@link #SCALE_DOWN_COOLDOWN_TICKS} ticks of asking for
 * less. Assignment, in {@link Mode#HRW}: each adapter (by name) keeps its previous homes that have a slot to spare, then
 * takes servers in rendezvous order, skipping full ones; in {@link Mode#MCF}: one min-cost flow over all adapters with
 * edge cost {@code alpha * rendezvous rank + gamma * new - beta * keep} (Dynamo's defaults 1, 1000 and 250) and each
 * server's slots as its capacity. Adapters known to the fleet but idle get one rendezvous-hash home. Dynamo routes
 * only: its workers load an adapter when a request for it comes, so {@link #acts()} is false.
 */
public final class DynamoPlacement implements PlacementAlgorithm {
    public static final String HRW_NAME = "dynamo-hrw";
    public static final String MCF_NAME = "dynamo-mcf";
    public static final int SCALE_DOWN_COOLDOWN_TICKS = 5;
    static final long ALPHA_PREF = 1;
    static final long GAMMA_LOAD = 1000;
    static final long BETA_KEEP = 250;

    public enum Mode {
        HRW,
        MCF
    }

    private final Mode mode;
    private long tick;
    private final Map<String, Long> scaleDownSince = new HashMap<>();

    public DynamoPlacement(Mode mode) {
        this.mode = mode;
    }

    @Override
    public String name() {
        return mode == Mode.HRW ? HRW_NAME : MCF_NAME;
    }

    @Override
    public boolean acts() {
        return false;
    }

    @Override
    public Map<String, List<Endpoint>> plan(
            Map<String, Double> rates, FleetState fleet, Map<String, List<Endpoint>> previous) {
        tick++;
        int slots = fleet.slots();
        Map<String, List<Endpoint>> homes = new LinkedHashMap<>();
        if (slots == 0) return homes;
        Map<String, Integer> counts =
                replicaCounts(rates, slots, fleet.servers().size());
        for (var e : counts.entrySet()) {
            int before = previous.getOrDefault(e.getKey(), List.of()).size();
            e.setValue(hysteresis(e.getKey(), e.getValue(), before));
        }
        scaleDownSince.keySet().retainAll(counts.keySet());
        if (mode == Mode.HRW) {
            assignHrw(counts, fleet, previous, homes);
        } else {
            assignMcf(counts, fleet, previous, homes);
        }
        return homes;
    }

    /** Dynamo's {@code compute_active_replica_counts}. */
    static Map<String, Integer> replicaCounts(Map<String, Double> rates, int slots, int servers) {
        List<String> ranked = BalancedPlacement.byRate(rates);
        if (ranked.size() > slots) ranked = ranked.subList(0, slots);
        double total = 0;
        for (String a : ranked) total += rates.get(a);
        Map<String, Integer> counts = new LinkedHashMap<>();
        if (total <= 0) return counts;
        Map<String, Double> raw = new LinkedHashMap<>();
        double sum = 0;
        for (String a : ranked) {
            double c = Math.min(Math.max(Math.ceil(rates.get(a) / total * slots), 1), servers);
            raw.put(a, c);
            sum += c;
        }
        if (sum <= slots) {
            raw.forEach((a, c) -> counts.put(a, (int) (double) c));
            return counts;
        }
        double scale = slots / sum;
        Map<String, Double> remainder = new HashMap<>();
        int floored = 0;
        for (String a : ranked) {
            double c = Math.max(raw.get(a) * scale, 1);
            int f = (int) Math.max(Math.floor(c), 1);
            counts.put(a, f);
            remainder.put(a, c - f);
            floored += f;
        }
        int leftover = Math.max(slots - floored, 0);
        List<String> byRemainder = new ArrayList<>(ranked);
        byRemainder.sort(Comparator.comparing((String a) -> remainder.get(a))
                .reversed()
                .thenComparing(Comparator.naturalOrder()));
        for (String a : byRemainder) {
            if (leftover == 0) break;
            if (counts.get(a) < servers) {
                counts.put(a, counts.get(a) + 1);
                leftover--;
            }
        }
        return counts;
    }

    private int hysteresis(String adapter, int desired, int current) {
        if (desired >= current) {
            scaleDownSince.remove(adapter);
            return desired;
        }
        Long since = scaleDownSince.get(adapter);
        if (since == null) {
            scaleDownSince.put(adapter, tick);
            return current;
        }
        if (tick - since < SCALE_DOWN_COOLDOWN_TICKS) return current;
        scaleDownSince.put(adapter, tick);
        return desired;
    }

    private static void assignHrw(
            Map<String, Integer> counts,
            FleetState fleet,
            Map<String, List<Endpoint>> previous,
            Map<String, List<Endpoint>> homes) {
        Map<Endpoint, Integer> used = new HashMap<>();
        Map<Endpoint, Integer> capacity = new HashMap<>();
        for (ServerView s : fleet.servers()) {
            used.put(s.endpoint(), s.resident().size());
            capacity.put(s.endpoint(), s.slots());
        }
        List<String> names = new ArrayList<>(counts.keySet());
        names.sort(Comparator.naturalOrder());
        List<Endpoint> endpoints = fleet.endpoints();
        for (String adapter : names) {
            int k = counts.get(adapter);
            Set<Endpoint> loaded = fleet.holders(adapter);
            Set<Endpoint> prior = Set.copyOf(previous.getOrDefault(adapter, List.of()));
            List<Endpoint> ranked = Rendezvous.rank(adapter, endpoints);
            List<Endpoint> chosen = new ArrayList<>();
            for (int pass = 0; pass < 2; pass++) {
                for (Endpoint e : ranked) {
                    if (chosen.size() >= k) break;
                    if (chosen.contains(e) || pass == 0 && !prior.contains(e)) continue;
                    int usage = used.get(e) - (loaded.contains(e) ? 1 : 0); // its own slot is not another's
                    if (usage >= capacity.get(e)) continue;
                    chosen.add(e);
                }
            }
            if (chosen.isEmpty()) chosen.addAll(ranked.subList(0, Math.min(k, ranked.size())));
            for (Endpoint e : chosen) {
                if (!loaded.contains(e)) used.merge(e, 1, Integer::sum);
            }
            homes.put(adapter, List.copyOf(chosen));
        }
        pinIdle(fleet, homes);
    }

    private static void assignMcf(
            Map<String, Integer> counts,
            FleetState fleet,
            Map<String, List<Endpoint>> previous,
            Map<String, List<Endpoint>> homes) {
        List<Endpoint> endpoints = fleet.endpoints();
        List<String> names = new ArrayList<>(counts.keySet());
        names.sort(Comparator.naturalOrder());
        int[] capacity = new int[endpoints.size()];
        for (int w = 0; w < capacity.length; w++)
            capacity[w] = fleet.servers().get(w).slots();
        int[] demand = new int[names.size()];
        long[][] cost = new long[names.size()][endpoints.size()];
        for (int l = 0; l < names.size(); l++) {
            String adapter = names.get(l);
            demand[l] = counts.get(adapter);
            List<Endpoint> ranked = Rendezvous.rank(adapter, endpoints);
            Set<Endpoint> prior = Set.copyOf(previous.getOrDefault(adapter, List.of()));
            for (int w = 0; w < endpoints.size(); w++) {
                Endpoint e = endpoints.get(w);
                boolean keep = prior.contains(e);
                cost[l][w] = ALPHA_PREF * ranked.indexOf(e) + (keep ? -BETA_KEEP : GAMMA_LOAD);
            }
        }
        int[][] flow = MinCostFlow.assign(demand, capacity, cost);
        for (int l = 0; l < names.size(); l++) {
            List<Endpoint> chosen = new ArrayList<>();
            for (int w = 0; w < endpoints.size(); w++) {
                if (flow[l][w] > 0) chosen.add(endpoints.get(w));
            }
            if (chosen.isEmpty()) {
                // Overflow: Dynamo narrows to warm workers, else one rendezvous home.
                Set<Endpoint> warm = fleet.holders(names.get(l));
                chosen.addAll(warm.isEmpty() ? List.of(Rendezvous.first(names.get(l), endpoints)) : warm);
            }
            chosen.sort(Rendezvous.order(names.get(l)));
            homes.put(names.get(l), List.copyOf(chosen));
        }
        pinIdle(fleet, homes);
    }

    /** Adapters the fleet holds that have no homes yet get their rendezvous-hash home (a cold-start pin). */
    private static void pinIdle(FleetState fleet, Map<String, List<Endpoint>> homes) {
        Set<String> known = new HashSet<>();
        for (ServerView s : fleet.servers()) known.addAll(s.resident().keySet());
        List<String> idle = new ArrayList<>(known);
        idle.removeAll(homes.keySet());
        idle.sort(Comparator.naturalOrder());
        for (String adapter : idle) {
            homes.put(adapter, List.of(Rendezvous.first(adapter, fleet.endpoints())));
        }
    }
}
