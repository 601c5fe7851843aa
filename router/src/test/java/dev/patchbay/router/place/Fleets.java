package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.scrape.AdapterResidency;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Fleets for the placement tests: servers by index, what each holds and runs. */
final class Fleets {
    private Fleets() {}

    /** Where the adapters the tests load are: placement loads no other. */
    static final Map<String, String> PATHS = Map.of("hot", "/lora/hot", "warm", "/w");

    static Endpoint server(int i) {
        return new Endpoint("10.0.0." + (i + 1), 8000);
    }

    /** {@code n} servers with {@code slots} slots each, holding nothing. */
    static FleetState empty(int n, int slots) {
        List<ServerView> servers = new ArrayList<>();
        for (int i = 0; i < n; i++) servers.add(new ServerView(server(i), slots, Map.of(), Map.of(), null));
        return new FleetState(servers, PATHS::get);
    }

    /** The same servers, server {@code i} holding {@code held} (in host memory, unpinned) with {@code busy} requests. */
    static FleetState holding(FleetState fleet, int i, Map<String, AdapterResidency> held, Map<String, Integer> busy) {
        List<ServerView> servers = new ArrayList<>(fleet.servers());
        ServerView s = servers.get(i);
        Map<String, AdapterResidency> resident = new HashMap<>(s.resident());
        resident.putAll(held);
        Map<String, Integer> inFlight = new HashMap<>(s.inFlight());
        inFlight.putAll(busy);
        servers.set(i, new ServerView(s.endpoint(), s.slots(), resident, inFlight, s.listed()));
        return new FleetState(servers, fleet.pathOf());
    }

    static Map<String, AdapterResidency> inHost(String... adapters) {
        Map<String, AdapterResidency> held = new HashMap<>();
        for (String a : adapters) held.put(a, AdapterResidency.IN_HOST);
        return held;
    }

    /** Expected requests/s per server when each adapter's rate splits evenly over its homes. */
    static Map<Endpoint, Double> expectedLoad(Map<String, Double> rates, Map<String, List<Endpoint>> homes) {
        Map<Endpoint, Double> load = new HashMap<>();
        homes.forEach((adapter, at) -> {
            for (Endpoint e : at) load.merge(e, rates.get(adapter) / at.size(), Double::sum);
        });
        return load;
    }
}
