package dev.patchbay.router.place;

import java.time.Duration;

/**
 * How the placement controller runs.
 *
 * @param interval        time between placement ticks
 * @param rateHalfLife    half-life of the arrival-rate averages
 * @param maxLoadsPerTick loads (preloads) started per tick across the fleet, at most
 * @param releaseAfter    ticks a surplus copy stays idle and unplanned before it is released
 * @param reloadCooldown  ticks before a home whose preload was evicted is preloaded again
 */
public record PlacementSettings(
        Duration interval, Duration rateHalfLife, int maxLoadsPerTick, int releaseAfter, int reloadCooldown) {
    public static final PlacementSettings DEFAULT =
            new PlacementSettings(Duration.ofSeconds(1), Duration.ofSeconds(5), 4, 3, 10);

    public PlacementSettings {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("the placement interval must be > 0, got " + interval);
        }
        if (rateHalfLife.isNegative() || rateHalfLife.isZero()) {
            throw new IllegalArgumentException("the rate half-life must be > 0, got " + rateHalfLife);
        }
        if (maxLoadsPerTick < 0 || releaseAfter < 1 || reloadCooldown < 0) {
            throw new IllegalArgumentException("maxLoadsPerTick and reloadCooldown must be >= 0 and releaseAfter >= 1");
        }
    }
}
