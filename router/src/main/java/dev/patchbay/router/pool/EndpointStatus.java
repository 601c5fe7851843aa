package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.scrape.EndpointMetrics;

/**
 * The pool's view of one endpoint.
 *
 * @param metrics         the last good scrape, or null before the first one
 * @param lastGoodNanos   System.nanoTime() of the last good scrape, or 0
 * @param failing         true after a failed scrape or a refused connection, until a good scrape
 * @param lastError       why the last scrape failed, or null
 */
public record EndpointStatus(Endpoint endpoint, EndpointMetrics metrics, long lastGoodNanos, boolean failing,
                             String lastError) {
    public boolean isReady(long nowNanos, long stalenessNanos) {
        return metrics != null && !failing && nowNanos - lastGoodNanos <= stalenessNanos;
    }

    /** Seconds since the last good scrape; +Inf before the first one. */
    public double ageSeconds(long nowNanos) {
        return metrics == null ? Double.POSITIVE_INFINITY : (nowNanos - lastGoodNanos) / 1e9;
    }
}
