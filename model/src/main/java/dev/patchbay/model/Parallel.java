package dev.patchbay.model;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Splits loops over rows, heads or tokens across the calling thread and {@code threads - 1} workers of its own.
 *
 * <p>A one-token decode step of SmolLM2-135M makes about 150 of these calls, each a few tens of microseconds of work.
 * A fork-join pool woke a parked worker for each and parked the caller until the pool was done, 7 to 15 µs per call
 * on the 2-core machine, so up to a tenth of the step. Here the caller works on the loop itself and the workers spin
 * for {@link #SPIN_NANOS} between calls before they park, as llama.cpp's OpenMP threads do: within a step a call finds
 * them awake, and between idle steps they sleep.
 */
final class Parallel implements AutoCloseable {
    @FunctionalInterface
    interface RangeBody {
        void run(int from, int to);
    }

    /** How long an idle worker looks for the next call before it parks: longer than the gaps within a step. */
    static final long SPIN_NANOS = 200_000;

    /** One call: chunks are claimed one at a time, so a thread that another process slows takes fewer of them. */
    private static final class Job {
        final RangeBody body;
        final int n, chunks;
        final AtomicInteger next = new AtomicInteger(), pending;
        volatile Throwable failure;

        Job(RangeBody body, int n, int chunks) {
            this.body = body;
            this.n = n;
            this.chunks = chunks;
            this.pending = new AtomicInteger(chunks);
        }

        void work() {
            for (int c; (c = next.getAndIncrement()) < chunks; ) {
                try {
                    body.run((int) ((long) n * c / chunks), (int) ((long) n * (c + 1) / chunks));
                } catch (Throwable t) {
                    failure = t;
                } finally {
                    pending.decrementAndGet();
                }
            }
        }
    }

    private final int threads;
    private final Thread[] workers;
    private volatile Job job;
    private volatile boolean closed;
    /** Per worker: set while it is parked or about to park, so a new call knows to unpark it. */
    private final AtomicInteger[] sleeping;

    Parallel(int threads) {
        this.threads = Math.max(1, threads);
        this.workers = new Thread[this.threads - 1];
        this.sleeping = new AtomicInteger[workers.length];
        for (int i = 0; i < workers.length; i++) {
            int index = i;
            sleeping[i] = new AtomicInteger();
            workers[i] = Thread.ofPlatform()
                    .daemon()
                    .name("patchbay-forward-" + (i + 1))
                    .start(() -> workerLoop(index));
        }
    }

    int threads() {
        return threads;
    }

    /**
     * Runs {@code body} over [0, n) in chunks of at least {@code grain} items. A few chunks per thread keep the
     * cores busy when another process takes one of them for a while. Not reentrant: one call at a time.
     */
    void forRange(int n, int grain, RangeBody body) {
        int chunks = Math.min(threads * 2, Math.max(1, n / Math.max(1, grain)));
        if (workers.length == 0 || chunks <= 1) {
            if (n > 0) body.run(0, n);
            return;
        }
        Job j = new Job(body, n, chunks);
        job = j;
        for (int i = 0; i < workers.length; i++) {
            if (sleeping[i].get() != 0) LockSupport.unpark(workers[i]);
        }
        j.work();
        // The last chunks may still be running on a worker; they are short, so wait for them without parking.
        for (int spins = 0; j.pending.get() != 0; spins++) {
            if (spins < 10_000) Thread.onSpinWait();
            else Thread.yield();
        }
        Throwable failure = j.failure;
        if (failure instanceof RuntimeException e) throw e;
        if (failure instanceof Error e) throw e;
        if (failure != null) throw new IllegalStateException(failure);
    }

    private void workerLoop(int index) {
        Job last = null;
        while (!closed) {
            Job j = job;
            if (j != last && j != null) {
                last = j;
                j.work();
                continue;
            }
            long until = System.nanoTime() + SPIN_NANOS;
            while ((j = job) == last && !closed && System.nanoTime() < until) Thread.onSpinWait();
            if (j != last || closed) continue;
            // Announce the park before the last look, so a call published after the look sees the flag and unparks.
            sleeping[index].set(1);
            if (job == last && !closed) LockSupport.park(this);
            sleeping[index].set(0);
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Thread w : workers) LockSupport.unpark(w);
    }
}
