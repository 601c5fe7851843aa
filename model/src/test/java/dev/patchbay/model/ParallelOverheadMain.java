package dev.patchbay.model;

/**
 * What one {@link Parallel#forRange} call costs beyond its work: 20,000 calls of four chunks that do next to nothing,
 * on two threads, five times. Run with the model module's test class path.
 */
public final class ParallelOverheadMain {
    public static void main(String[] args) {
        try (Parallel p = new Parallel(2)) {
            float[] sink = new float[8];
            for (int rep = 0; rep < 5; rep++) {
                long t0 = System.nanoTime();
                int calls = 20000;
                for (int i = 0; i < calls; i++) p.forRange(1024, 4, (from, to) -> sink[from % 8] += to);
                System.out.printf("%.1f us per forRange%n", (System.nanoTime() - t0) / 1e3 / calls);
            }
        }
    }
}
