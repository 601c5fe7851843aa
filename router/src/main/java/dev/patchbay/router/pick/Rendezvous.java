package dev.patchbay.router.pick;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Rendezvous (highest random weight) hashing of an adapter onto endpoints: every router that sees the same endpoints
 * ranks them the same way for an adapter, without talking, and adding or removing an endpoint moves only the adapters
 * that ranked it first. The weight is FNV-1a (64-bit) over the adapter's name, a zero byte and the endpoint's address,
 * as llm-d's proposed home bonus hashes it, finished with a bit mixer so that addresses differing only in their last
 * characters still spread.
 */
public final class Rendezvous {
    private static final long FNV_OFFSET = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    private Rendezvous() {}

    /** FNV-1a (64-bit) over {@code adapter}, a zero byte and {@code address}: llm-d's home hash, as it is. */
    public static long fnv1a64(String adapter, String address) {
        long h = FNV_OFFSET;
        for (byte b : adapter.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * FNV_PRIME;
        }
        h = (h ^ 0) * FNV_PRIME;
        for (byte b : address.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * FNV_PRIME;
        }
        return h;
    }

    /** The weight of {@code endpoint} for {@code adapter}; higher ranks first. */
    public static long weight(String adapter, Endpoint endpoint) {
        long h = fnv1a64(adapter, endpoint.address());
        // splitmix64's finaliser
        h = (h ^ (h >>> 30)) * 0xbf58476d1ce4e5b9L;
        h = (h ^ (h >>> 27)) * 0x94d049bb133111ebL;
        return h ^ (h >>> 31);
    }

    /** Orders endpoints for an adapter, best first; ties (never in practice) by address. */
    public static Comparator<Endpoint> order(String adapter) {
        return Comparator.comparingLong((Endpoint e) -> weight(adapter, e))
                .reversed()
                .thenComparing(Endpoint::address);
    }

    /** {@code endpoints} ranked for {@code adapter}, best first. */
    public static List<Endpoint> rank(String adapter, List<Endpoint> endpoints) {
        List<Endpoint> ranked = new ArrayList<>(endpoints);
        ranked.sort(order(adapter));
        return ranked;
    }

    /** The first-ranked endpoint for {@code adapter}, or null when there is none. */
    public static Endpoint first(String adapter, List<Endpoint> endpoints) {
        Endpoint best = null;
        long bestWeight = Long.MIN_VALUE;
        for (Endpoint e : endpoints) {
            long w = weight(adapter, e);
            if (best == null || w > bestWeight || w == bestWeight && e.address().compareTo(best.address()) < 0) {
                best = e;
                bestWeight = w;
            }
        }
        return best;
    }
}
