package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.Rendezvous;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The placement routing reads: each planned adapter's homes, the servers it was planned over (an adapter without a
 * plan has its rendezvous-hash home among them), and the copies released from servers, which get none of that
 * adapter's requests until placement loads it there again.
 */
public record Placement(
        long tick, List<Endpoint> servers, Map<String, List<Endpoint>> homes, Map<String, Set<Endpoint>> released) {
    /** No placement: routing as if there were none. */
    public static final Placement NONE = new Placement(0, List.of(), Map.of(), Map.of());

    public Placement {
        servers = List.copyOf(servers);
        homes = Map.copyOf(homes);
        released = Map.copyOf(released);
    }

    /** The adapter's homes: its planned ones, else its rendezvous-hash home; none without a placement. */
    public List<Endpoint> homesOf(String adapter) {
        List<Endpoint> planned = homes.get(adapter);
        if (planned != null) return planned;
        Endpoint pin = Rendezvous.first(adapter, servers);
        return pin == null ? List.of() : List.of(pin);
    }

    public boolean isHome(String adapter, Endpoint endpoint) {
        return homesOf(adapter).contains(endpoint);
    }

    /** Placement released the adapter from the endpoint: requests for it must not go there. */
    public boolean isReleased(String adapter, Endpoint endpoint) {
        Set<Endpoint> from = released.get(adapter);
        return from != null && from.contains(endpoint);
    }
}
