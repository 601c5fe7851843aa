package dev.patchbay.engine.sched;

import dev.patchbay.engine.adapter.RegisteredAdapter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Requests that {@link EngineCore#submit} accepted and that no published snapshot shows yet, by adapter. A snapshot
 * is published at the end of a step and a request submitted during a step joins the scheduler only before the next
 * one, so without these a page would show a request up to two steps after it arrived: long enough for several
 * routers, each seeing only its own sends, to take the same free batch slot. Any thread adds; the engine thread
 * removes, just before the snapshot that shows the request is published.
 */
final class UnshownArrivals {
    private final AtomicInteger total = new AtomicInteger();
    private final AtomicLong promptTokens = new AtomicLong();
    private final Map<RegisteredAdapter, Integer> byAdapter = new ConcurrentHashMap<>();

    /** A request arrived with a prompt of {@code prompt} tokens; {@code adapter} is null for the base model. */
    void arrived(RegisteredAdapter adapter, int prompt) {
        if (adapter != null) byAdapter.merge(adapter, 1, Integer::sum);
        promptTokens.addAndGet(prompt);
        total.incrementAndGet();
    }

    /** The next snapshot shows a request that arrived. */
    void shown(RegisteredAdapter adapter, int prompt) {
        total.decrementAndGet();
        promptTokens.addAndGet(-prompt);
        if (adapter != null) byAdapter.computeIfPresent(adapter, (a, n) -> n > 1 ? n - 1 : null);
    }

    int total() {
        return total.get();
    }

    long promptTokens() {
        return promptTokens.get();
    }

    /** A copy: the adapters with requests not shown, and how many each. */
    Map<RegisteredAdapter, Integer> byAdapter() {
        return Map.copyOf(byAdapter);
    }
}
