package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.Rendezvous;
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
 * {@code shrinkMargin} below the rounding point. Among the servers within {@link #SLACK} of a server's mean traffic of
 * the least loaded, the adapter's rendezvous order decides (bounded-load rendezvous hashing): equal observations give
 * equal homes, and observations that differ a little, as several routers' do, mostly give them too.
 */
public final class BalancedPlacement implements PlacementAlgorithm {
    public static final String NAME = "balanced";
    public static final double DEFAULT_KEEP_BONUS = 0.5;
    public static final double DEFAULT_SHRINK_MARGIN = 0.25;
    /** A home may go to a server up to this share of a server's mean traffic above the least loaded. */
    static final double SLACK = 0.5;

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
            List<Integer> ranked = rendezvousOrder(adapter, servers);
            for (int j = 0; j < k; j++) {
                double[] cost = new double[servers.size()];
                double least = Double.POSITIVE_INFINITY;
                for (int s : ranked) {
                    ServerView server = servers.get(s);
                    cost[s] = Double.POSITIVE_INFINITY;
                    if (used[s] >= server.slots()
                            || chosen.contains(server.endpoint())
                            || !fleet.canHost(server, adapter)) {
                        continue;
                    }
                    boolean keep = kept.contains(server.endpoint()) || server.holds(adapter);
                    cost[s] = load[s] - (keep ? keepBonus * meanLoad : 0);
                    least = Math.min(least, cost[s]);
                }
                if (least == Double.POSITIVE_INFINITY) break;
                // The first server in the adapter's rendezvous order within the slack of the least loaded: routers
                // whose rates differ a little still choose alike, where the strict least would flip with them.
                int best = -1;
                for (int s : ranked) {
                    if (cost[s] <= least + SLACK * meanLoad) {
                        best = s;
                        break;
                    }
                }
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

    private static List<Integer> rendezvousOrder(String adapter, List<ServerView> servers) {
        List<Integer> order = new ArrayList<>();
        for (int s = 0; s < servers.size(); s++) order.add(s);
        order.sort(Comparator.comparing(s -> servers.get(s).endpoint(), Rendezvous.order(adapter)));
        return order;
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
