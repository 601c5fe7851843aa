package dev.patchbay.router.flow;

import dev.patchbay.router.pick.EndpointState;
import java.util.List;

/**
 * The pool is saturated when every candidate's waiting queue is over {@code queueDepthThreshold} and its KV-cache use
 * is over {@code kvCacheUtilThreshold}; sheddable requests are then refused with 429 before any pick (the gateway's
 * saturation detector, with its names).
 */
public record SaturationDetector(double queueDepthThreshold, double kvCacheUtilThreshold) {
    public static final SaturationDetector DEFAULT = new SaturationDetector(5, 0.8);

    public boolean isSaturated(List<EndpointState> candidates) {
        if (candidates.isEmpty()) {
            return false;
        }
        for (EndpointState state : candidates) {
            if (state.metrics().waitingRequests() <= queueDepthThreshold
                    || state.metrics().kvCacheUsage() <= kvCacheUtilThreshold) {
                return false;
            }
        }
        return true;
    }
}
