package dev.patchbay.router.scrape;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Small, stable ints for adapter names, handed out when a scrape first mentions a name: pick-time work over every
 * endpoint's slots (the lora-bridge scorer's groups) is then array work instead of hashing strings. One table for
 * the process; it holds each distinct name ever scraped, which the adapter catalog bounds.
 */
public final class AdapterIds {
    private static final ConcurrentHashMap<String, Integer> IDS = new ConcurrentHashMap<>();
    private static final AtomicInteger NEXT = new AtomicInteger();

    private AdapterIds() {
    }

    public static int of(String adapter) {
        Integer id = IDS.get(adapter);
        return id != null ? id : IDS.computeIfAbsent(adapter, name -> NEXT.getAndIncrement());
    }

    /**
     * The name's id, or -1 if no scrape has named it: for names from requests, which must not grow the table (a
     * client can send any model name).
     */
    public static int find(String adapter) {
        Integer id = IDS.get(adapter);
        return id == null ? -1 : id;
    }

    /** Every id handed out so far is below this. */
    public static int bound() {
        return NEXT.get();
    }
}
