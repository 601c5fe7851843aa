package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.scrape.EndpointMetrics;

/**
 * The pool's view of one endpoint.
 *
 * @param metrics         the last good scrape, or null before the first one
 * @param lastGoodNanos   System.nanoTime() of the last good scrape, or 0
 * @param failing         true after a failed scrape (other than a timed-out one) or a refused connection, until a
 *                        good scrape
 * @param lastError       why the last scrape failed, or null
 */
public record EndpointStatus(
        Endpoint endpoint, EndpointMetrics metrics, long lastGoodNanos, boolean failing, String lastError) {
    /** It has data, and nothing has failed since the scrape that read it; how old the data is aside. */
    public boolean isUsable() {
        return metrics != null && !failing;
    }

    /** Seconds since the last good scrape; +Inf before the first one. */
    public double ageSeconds(long nowNanos) {
        return metrics == null ? Double.POSITIVE_INFINITY : (nowNanos - lastGoodNanos) / 1e9;
    }
}
