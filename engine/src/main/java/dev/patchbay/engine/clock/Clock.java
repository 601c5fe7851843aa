package dev.patchbay.engine.clock;

/**
 * Time as the engine sees it. The engine never reads the system clock directly, so the same
 * scheduler code runs on real time in the server and on virtual time in the fleet simulator.
 */
public interface Clock {
    /** Monotonic time in nanoseconds; only differences are meaningful. */
    long nanos();

    /** Wall-clock Unix time in seconds, as Prometheus timestamps and the legacy LoRA gauge use it. */
    double unixSeconds();

    /** Blocks the calling thread until {@link #nanos()} reaches {@code deadline}; virtual clocks never block. */
    void sleepUntil(long deadlineNanos) throws InterruptedException;

    /** Whether time only moves when a driver advances it. */
    boolean isVirtual();
}
