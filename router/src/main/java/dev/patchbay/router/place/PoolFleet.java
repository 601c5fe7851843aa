package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.EndpointStatus;
import dev.patchbay.router.pool.ServedModels;
import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The fleet as the router's pool knows it: what placement plans over. */
public final class PoolFleet {
    private PoolFleet() {}

    /**
     * The ready servers that report adapter slots, in the pool's order. Residency comes from Patchbay's families;
     * a server without them (vLLM) holds what it lists, as vLLM keeps every listed adapter loaded.
     *
     * @param configured adapter paths of one's own, over those the servers' model lists give
     */
    public static FleetState read(EndpointPool pool, Map<String, String> configured) {
        List<ServerView> servers = new ArrayList<>();
        Map<Endpoint, ServedModels> lists = pool.servedModels();
        for (EndpointStatus status : pool.statuses()) {
            EndpointMetrics m = status.metrics();
            if (!status.isUsable() || m == null) continue;
            int slots = m.gpuSlots() > 0 ? m.gpuSlots() : m.maxLora();
            if (slots <= 0) continue;
            ServedModels list = lists.getOrDefault(status.endpoint(), ServedModels.UNKNOWN);
            Set<String> listed = list.known() ? list.models() : null;
            Map<String, AdapterResidency> resident = new HashMap<>();
            Map<String, Integer> inFlight = new HashMap<>();
            if (m.hasResidencyFamilies()) {
                resident.putAll(m.residency());
                inFlight.putAll(m.adapterRunning());
                m.adapterWaiting().forEach((a, n) -> inFlight.merge(a, n, Integer::sum));
            } else {
                if (listed != null) {
                    for (String model : listed) {
                        if (!list.baseModels().contains(model)) resident.put(model, AdapterResidency.IN_HOST);
                    }
                }
                for (String a : m.activeAdapters()) {
                    resident.put(a, AdapterResidency.IN_SLOT);
                    inFlight.merge(a, 1, Integer::sum);
                }
                for (String a : m.waitingAdapters()) inFlight.merge(a, 1, Integer::sum);
            }
            servers.add(new ServerView(status.endpoint(), slots, resident, inFlight, listed));
        }
        return new FleetState(servers, paths(lists.values(), configured)::get);
    }

    /** Adapter paths the model lists give (vLLM's and Patchbay's {@code root}), overridden by {@code configured}. */
    private static Map<String, String> paths(Iterable<ServedModels> lists, Map<String, String> configured) {
        Map<String, String> paths = null;
        for (ServedModels list : lists) {
            if (list.adapterRoots().isEmpty()) continue;
            if (paths == null) paths = new HashMap<>();
            paths.putAll(list.adapterRoots());
        }
        if (paths == null) return configured;
        paths.putAll(configured);
        return paths;
    }
}
