package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.scrape.AdapterResidency;
import java.util.Map;
import java.util.Set;

/**
 * One server as placement sees it after a scrape.
 *
 * @param slots    its batch slots for adapters ({@code max_loras})
 * @param resident adapters it holds in a slot or in host memory, by name; for a server without Patchbay's residency
 *                 families, the adapters it lists (vLLM keeps a listed adapter loaded)
 * @param inFlight its running plus waiting requests per adapter
 * @param listed   the models it lists on {@code /v1/models}, or null when the router has no list from it
 */
public record ServerView(
        Endpoint endpoint,
        int slots,
        Map<String, AdapterResidency> resident,
        Map<String, Integer> inFlight,
        Set<String> listed) {
    public ServerView {
        resident = Map.copyOf(resident);
        inFlight = Map.copyOf(inFlight);
        listed = listed == null ? null : Set.copyOf(listed);
    }

    public boolean holds(String adapter) {
        return resident.containsKey(adapter);
    }

    public boolean pinned(String adapter) {
        AdapterResidency r = resident.get(adapter);
        return r != null && r.pinned();
    }

    public int inFlight(String adapter) {
        return inFlight.getOrDefault(adapter, 0);
    }

    /** It serves the adapter now (lists it, or lists nothing the router knows of). */
    public boolean serves(String adapter) {
        return listed == null || listed.contains(adapter);
    }
}
