package dev.patchbay.engine.clock;

/**
 * Time that moves only when a driver advances it. Wall time is a fixed epoch plus virtual time,
 * so runs with the same seed produce identical traces, timestamps included.
 */
public final class VirtualClock implements Clock {
    /** 2026-01-01T00:00:00Z: an arbitrary, fixed origin for virtual wall time. */
    public static final double DEFAULT_EPOCH_SECONDS = 1_767_225_600.0;

    private final double epochSeconds;
    private volatile long now;

    public VirtualClock() {
        this(DEFAULT_EPOCH_SECONDS);
    }

    public VirtualClock(double epochSeconds) {
        this.epochSeconds = epochSeconds;
    }

    @Override
    public long nanos() {
        return now;
    }

    @Override
    public double unixSeconds() {
        return epochSeconds + now / 1e9;
    }

    /** Moves time forward to {@code t}; moving backwards is a driver bug. */
    public void advanceTo(long t) {
        if (t < now) throw new IllegalArgumentException("virtual time cannot go back: " + t + " < " + now);
        now = t;
    }

    public void advance(long nanos) {
        advanceTo(now + nanos);
    }

    @Override
    public void sleepUntil(long deadlineNanos) {
        if (deadlineNanos > now) advanceTo(deadlineNanos);
    }

    @Override
    public boolean isVirtual() {
        return true;
    }
}
