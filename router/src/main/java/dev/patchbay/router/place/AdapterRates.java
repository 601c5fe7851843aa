package dev.patchbay.router.place;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The arrival rate of each adapter's requests as this router sees them: arrivals are counted as they come (any thread)
 * and folded at each placement tick into an exponential moving average with the given half-life. An adapter whose
 * average falls below {@link #FORGET_BELOW} requests/s is forgotten, so the map stays the size of the adapters in use.
 */
public final class AdapterRates {
    public static final double FORGET_BELOW = 1e-3;

    private final double halfLifeSeconds;
    private final ConcurrentHashMap<String, LongAdder> arrivals = new ConcurrentHashMap<>();
    private final Map<String, Double> averages = new HashMap<>();
    private final Map<String, Long> arrivalTotals = new HashMap<>();

    public AdapterRates(double halfLifeSeconds) {
        if (!(halfLifeSeconds > 0)) {
            throw new IllegalArgumentException("the rate half-life must be > 0, got " + halfLifeSeconds);
        }
        this.halfLifeSeconds = halfLifeSeconds;
    }

    /** A request for {@code adapter} arrived. */
    public void arrived(String adapter) {
        arrivals.computeIfAbsent(adapter, a -> new LongAdder()).increment();
    }

    /**
     * Folds the arrivals since the last tick, {@code seconds} ago, into the averages and returns them (requests/s).
     * Called by one thread at a time.
     */
    public synchronized Map<String, Double> tick(double seconds) {
        if (!(seconds > 0)) {
            return Map.copyOf(averages);
        }
        double keep = Math.pow(0.5, seconds / halfLifeSeconds);
        Map<String, Long> counts = new HashMap<>();
        for (var e : arrivals.entrySet()) {
            long n = e.getValue().sumThenReset();
            if (n > 0) counts.put(e.getKey(), n);
        }
        for (var e : counts.entrySet()) {
            averages.putIfAbsent(e.getKey(), 0.0);
            arrivalTotals.merge(e.getKey(), e.getValue(), Long::sum);
        }
        for (var it = averages.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            double observed = counts.getOrDefault(e.getKey(), 0L) / seconds;
            double average = keep * e.getValue() + (1 - keep) * observed;
            if (average < FORGET_BELOW) {
                it.remove();
                arrivalTotals.remove(e.getKey());
            } else {
                e.setValue(average);
            }
        }
        return Map.copyOf(averages);
    }

    /** Arrivals counted per adapter while it has been remembered. */
    public synchronized Map<String, Long> arrivalTotals() {
        return Map.copyOf(arrivalTotals);
    }
}
