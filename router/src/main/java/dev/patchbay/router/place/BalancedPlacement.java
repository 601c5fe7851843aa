package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Patchbay's placement. The fleet's batch slots are shared out in proportion to arrival rate: an adapter with a share
 * {@code p} of the traffic gets {@code round(p * slots)} homes (at most one per server), so every home carries about
 * the same traffic; adapters whose share rounds to no slot are left to on-demand loading, and when the homes asked for
 * exceed the slots, they are taken back where a home carries least. Homes then go, hottest
 * adapter first, to the servers with the least expected traffic so far (hot adapters end up beside cold ones), at most
 * a server's slot count each. Against churn: a home the adapter has now (planned last time, or resident there) counts
 * as {@code keepBonus} of a server's mean traffic lighter, and a home count falls only once the ideal count is
 * {@code shrinkMargin} below the rounding point. Ties go by rendezvous hashing, so equal observations give equal homes.
 */
public final class BalancedPlacement implements PlacementAlgorithm {
    public static final String NAME = "balanced";
    public static final double DEFAULT_KEEP_BONUS = 0.5;
    public static final double DEFAULT_SHRINK_MARGIN = 0.25;

    private final double keepBonus;
    private final double shrinkMargin;

    public BalancedPlacement(double keepBonus, double shrinkMargin) {
        if (keepBonus < 0 || shrinkMargin < 0) {
            throw new IllegalArgumentException("keepBonus and shrinkMargin must be >= 0");
        }
        this.keepBonus = keepBonus;
        this.shrinkMargin = shrinkMargin;
    }

    public BalancedPlacement() {
        this(DEFAULT_KEEP_BONUS, DEFAULT_SHRINK_MARGIN);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean acts() {
        return true;
    }

    @Override
    public Map<String, List<Endpoint>> plan(
            Map<String, Double> rates, FleetState fleet, Map<String, List<Endpoint>> previous) {
        List<ServerView> servers = fleet.servers();
        int budget = fleet.slots();
        double total = rates.values().stream().mapToDouble(Double::doubleValue).sum();
        Map<String, List<Endpoint>> homes = new LinkedHashMap<>();
        if (budget == 0 || total <= 0) {
            return homes;
        }
        List<String> order = byRate(rates);
        Map<String, Integer> counts = homeCounts(order, rates, total, budget, servers.size(), previous);

        double[] load = new double[servers.size()];
        int[] used = new int[servers.size()];
        double meanLoad = total / servers.size();
        for (String adapter : order) {
            Integer k = counts.get(adapter);
            if (k == null) continue;
            double perHome = rates.get(adapter) / k;
            Set<Endpoint> kept = Set.copyOf(previous.getOrDefault(adapter, List.of()));
            List<Endpoint> chosen = new ArrayList<>(k);
            for (int j = 0; j < k; j++) {
                int best = -1;
                double bestCost = 0;
                long bestWeight = 0;
                for (int s = 0; s < servers.size(); s++) {
                    ServerView server = servers.get(s);
                    if (used[s] >= server.slots()
                            || chosen.contains(server.endpoint())
                            || !fleet.canHost(server, adapter)) {
                        continue;
                    }
                    boolean keep = kept.contains(server.endpoint()) || server.holds(adapter);
                    double cost = load[s] - (keep ? keepBonus * meanLoad : 0);
                    long weight = Rendezvous.weight(adapter, server.endpoint());
                    if (best < 0 || cost < bestCost || cost == bestCost && weight > bestWeight) {
                        best = s;
                        bestCost = cost;
                        bestWeight = weight;
                    }
                }
                if (best < 0) break;
                chosen.add(servers.get(best).endpoint());
                load[best] += perHome;
                used[best]++;
            }
            if (!chosen.isEmpty()) {
                chosen.sort(Rendezvous.order(adapter));
                homes.put(adapter, List.copyOf(chosen));
            }
        }
        return homes;
    }

    /** Adapters by rate, highest first, ties by name. */
    static List<String> byRate(Map<String, Double> rates) {
        List<String> order = new ArrayList<>(rates.keySet());
        order.sort(
                Comparator.comparing((String a) -> rates.get(a)).reversed().thenComparing(Comparator.naturalOrder()));
        return order;
    }

    private Map<String, Integer> homeCounts(
            List<String> order,
            Map<String, Double> rates,
            double total,
            int budget,
            int servers,
            Map<String, List<Endpoint>> previous) {
        Map<String, Integer> counts = new HashMap<>();
        Map<String, Double> ideal = new HashMap<>();
        int sum = 0;
        for (String adapter : order) {
            double x = budget * rates.get(adapter) / total;
            int k = (int) Math.floor(x + 0.5);
            int before = previous.getOrDefault(adapter, List.of()).size();
            if (before > k && x > before - 0.5 - shrinkMargin) {
                k = before; // not clearly lower yet
            }
            k = Math.min(k, servers);
            if (k > 0) {
                counts.put(adapter, k);
                ideal.put(adapter, x);
                sum += k;
            }
        }
        // Rounding and held counts can ask for more homes than slots: take them back where a home carries least.
        while (sum > budget) {
            String thinnest = null;
            for (String adapter : counts.keySet()) {
                if (thinnest == null
                        || ideal.get(adapter) / counts.get(adapter) < ideal.get(thinnest) / counts.get(thinnest)
                        || ideal.get(adapter) / counts.get(adapter) == ideal.get(thinnest) / counts.get(thinnest)
                                && adapter.compareTo(thinnest) > 0) {
                    thinnest = adapter;
                }
            }
            int k = counts.get(thinnest) - 1;
            if (k == 0) counts.remove(thinnest);
            else counts.put(thinnest, k);
            sum--;
        }
        return counts;
    }
}
