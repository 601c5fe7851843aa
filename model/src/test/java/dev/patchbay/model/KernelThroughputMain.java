package dev.patchbay.model;

import java.util.SplittableRandom;

/**
 * Bytes per second of the BF16 matrix product on one thread: args rows, cols, matrices [, tokens, default 1]. One
 * matrix of
 * 576 x 576 (648 KiB) stays in cache and shows what the kernel itself can do; a hundred of 1536 x 576 (168 MiB) are
 * read from memory, as a decode step reads its weights. Run with the model module's test class path and
 * {@code --add-modules jdk.incubator.vector}.
 */
public final class KernelThroughputMain {
    public static void main(String[] args) {
        int rows = Integer.parseInt(args[0]), cols = Integer.parseInt(args[1]), mats = Integer.parseInt(args[2]);
        SplittableRandom rng = new SplittableRandom(1);
        Matrix[] ms = new Matrix[mats];
        for (int m = 0; m < mats; m++) {
            short[] v = new short[rows * cols];
            for (int i = 0; i < v.length; i++) v[i] = TensorFiles.toBf16((float) rng.nextGaussian());
            ms[m] = Matrix.Bf16.of(v, rows, cols);
        }
        int tokens = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        float[] x = new float[tokens * cols];
        for (int i = 0; i < x.length; i++) x[i] = (float) rng.nextGaussian();
        float[] y = new float[tokens * rows];
        long bytes = (long) rows * cols * 2 * mats;
        for (int rep = 0; rep < 30; rep++) {
            long t0 = System.nanoTime();
            for (Matrix m : ms) m.matmulRows(x, tokens, 0, rows, y, rows);
            long t1 = System.nanoTime();
            if (rep % 5 == 4)
                System.out.printf(
                        "%.1f GB/s of weights (%d MB), %.1f GFLOP/s%n",
                        bytes / (double) (t1 - t0), bytes >> 20, bytes * tokens / (double) (t1 - t0));
        }
    }
}
