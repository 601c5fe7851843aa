package dev.patchbay.engine.clock;

import java.util.concurrent.locks.LockSupport;

/** The machine's clocks: {@link System#nanoTime()} for intervals, {@link System#currentTimeMillis()} for wall time. */
public final class RealClock implements Clock {
    public static final RealClock INSTANCE = new RealClock();

    private RealClock() {}

    @Override
    public long nanos() {
        return System.nanoTime();
    }

    @Override
    public double unixSeconds() {
        return System.currentTimeMillis() / 1000.0;
    }

    @Override
    public void sleepUntil(long deadlineNanos) throws InterruptedException {
        long remaining;
        while ((remaining = deadlineNanos - System.nanoTime()) > 0) {
            if (Thread.interrupted()) throw new InterruptedException();
            LockSupport.parkNanos(remaining);
        }
    }

    @Override
    public boolean isVirtual() {
        return false;
    }
}
