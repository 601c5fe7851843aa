package dev.patchbay.testkit;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits for a condition instead of sleeping for a fixed time. The deadline is no performance bound: it is long
 * (a minute by default, so a busy two-core machine never hits it) and only turns a hang into a failure that says
 * what never happened.
 */
public final class Await {
    public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(60);
    /** Polls start at once and back off to this, so a costly condition (an HTTP query) does not flood its target. */
    private static final long MAX_POLL_NANOS = 50_000_000;

    private Await() {}

    /** Returns once {@code condition} holds; fails naming {@code what} after {@link #DEFAULT_DEADLINE}. */
    public static void until(String what, BooleanSupplier condition) {
        until(what, condition, DEFAULT_DEADLINE);
    }

    public static void until(String what, BooleanSupplier condition, Duration deadline) {
        until(what, condition, () -> "", deadline);
    }

    /** As {@link #until(String, BooleanSupplier)}, with {@code state} in the failure message. */
    public static void until(String what, BooleanSupplier condition, Supplier<?> state) {
        until(what, condition, state, DEFAULT_DEADLINE);
    }

    private static void until(String what, BooleanSupplier condition, Supplier<?> state, Duration deadline) {
        long end = System.nanoTime() + deadline.toNanos();
        long pollNanos = 500_000;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                String seen = String.valueOf(state.get());
                throw new AssertionError("timed out after " + deadline.toSeconds() + " s waiting for " + what
                        + (seen.isEmpty() ? "" : "; last seen: " + seen));
            }
            pause(pollNanos);
            pollNanos = Math.min(MAX_POLL_NANOS, pollNanos * 2);
        }
    }

    /** The value {@code supplier} gives once it is non-null. */
    public static <T> T value(String what, Supplier<T> supplier) {
        Object[] holder = new Object[1];
        until(what, () -> (holder[0] = supplier.get()) != null);
        @SuppressWarnings("unchecked")
        T value = (T) holder[0];
        return value;
    }

    private static void pause(long nanos) {
        try {
            Thread.sleep(Duration.ofNanos(nanos));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", e);
        }
    }
}
