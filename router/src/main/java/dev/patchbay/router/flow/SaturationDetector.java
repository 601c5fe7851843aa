package dev.patchbay.router.pick;

import java.util.List;

/**
 * The pool is saturated when every candidate's waiting queue is over {@code queueThreshold}
 * and its KV-cache use is over {@code kvCacheThreshold}; sheddable requests are then refused.
 */
public record SaturationDetector(double queueThreshold, double kvCacheThreshold) {
    public static final SaturationDetector DEFAULT = new SaturationDetector(5, 0.8);

    public boolean isSaturated(List<EndpointState> candidates) {
        if (candidates.isEmpty()) {
            return false;
        }
        for (EndpointState state : candidates) {
            if (state.metrics().waitingRequests() <= queueThreshold
                    || state.metrics().kvCacheUsage() <= kvCacheThreshold) {
                return false;
            }
        }
        return true;
    }
}
