package dev.patchbay.router.scrape;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Small, stable ints for adapter names, handed out when a scrape first mentions a name: pick-time work over every
 * endpoint (placements, the lora-bridge scorer's groups) is then array work instead of hashing strings. Each endpoint
 * pool has its own table, holding the distinct names its servers have reported (the adapter catalog bounds it), and
 * it goes with the pool. Thread-safe.
 */
public final class AdapterIds {
    /** For metrics built outside any pool: tests, benchmarks. */
    public static final AdapterIds UNPOOLED = new AdapterIds();

    private final ConcurrentHashMap<String, Integer> ids = new ConcurrentHashMap<>();
    private final AtomicInteger next = new AtomicInteger();

    public int of(String adapter) {
        Integer id = ids.get(adapter);
        return id != null ? id : ids.computeIfAbsent(adapter, name -> next.getAndIncrement());
    }

    /**
     * The name's id, or -1 if no scrape has named it: for names from requests, which must not grow the table (a
     * client can send any model name).
     */
    public int find(String adapter) {
        Integer id = ids.get(adapter);
        return id == null ? -1 : id;
    }

    /** Every id handed out so far is below this. */
    public int bound() {
        return next.get();
    }
}
