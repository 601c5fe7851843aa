package dev.patchbay.model;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;

/** Splits loops over rows, heads or tokens across a fixed pool of worker threads. */
final class Parallel implements AutoCloseable {
    @FunctionalInterface
    interface RangeBody {
        void run(int from, int to);
    }

    private final ForkJoinPool pool;
    private final int threads;

    Parallel(int threads) {
        this.threads = Math.max(1, threads);
        this.pool = this.threads == 1 ? null : new ForkJoinPool(this.threads);
    }

    int threads() {
        return threads;
    }

    /**
     * Runs {@code body} over [0, n) in chunks of at least {@code grain} items. A few chunks per thread keep the
     * cores busy when another process takes one of them for a while.
     */
    void forRange(int n, int grain, RangeBody body) {
        int chunks = Math.min(threads * 2, Math.max(1, n / Math.max(1, grain)));
        if (pool == null || chunks <= 1) {
            if (n > 0) body.run(0, n);
            return;
        }
        List<ForkJoinTask<?>> tasks = new ArrayList<>(chunks);
        for (int c = 0; c < chunks; c++) {
            int from = (int) ((long) n * c / chunks);
            int to = (int) ((long) n * (c + 1) / chunks);
            tasks.add(ForkJoinTask.adapt(() -> body.run(from, to)));
        }
        pool.invoke(ForkJoinTask.adapt(() -> ForkJoinTask.invokeAll(tasks)));
    }

    @Override
    public void close() {
        if (pool != null) pool.shutdownNow();
    }
}
