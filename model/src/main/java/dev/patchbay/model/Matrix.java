package dev.patchbay.model;

/**
 * A weight matrix {@code [rows, cols]}, row-major as Hugging Face stores {@code [out, in]}, so each output is a dot
 * product with one contiguous row.
 *
 * <p>BF16 checkpoints stay BF16 in memory and are widened inside the kernels: a decode step streams every weight
 * once, so halving the bytes read nearly doubles single-sequence speed, and widening BF16 is an exact shift. F16 and
 * F32 checkpoints are held as F32.
 */
sealed interface Matrix permits Matrix.F32, Matrix.Bf16 {
    int rows();

    int cols();

    /** y[t * yStride + o] = row o · x[t] for tokens t in [0, tokens) and rows o in [rowFrom, rowTo). */
    void matmulRows(float[] x, int tokens, int rowFrom, int rowTo, float[] y, int yStride);

    /** Widens row {@code row} into out[off .. off + cols). */
    void copyRow(int row, float[] out, int off);

    /** row · x[xOff .. xOff + cols). */
    float dotRow(int row, float[] x, int xOff);

    /** y[yOff + i] += a * row[i] for i in [0, cols). */
    void addRowScaled(int row, float a, float[] y, int yOff);

    /** The {@code [cols, rows]} transpose, in the same precision. */
    Matrix transposed();

    /** Bytes of memory the values take. */
    long bytes();

    record F32(float[] data, int rows, int cols) implements Matrix {
        @Override
        public void matmulRows(float[] x, int tokens, int rowFrom, int rowTo, float[] y, int yStride) {
            Kernels.matmulRows(x, tokens, cols, data, rowFrom, rowTo, y, yStride);
        }

        @Override
        public void copyRow(int row, float[] out, int off) {
            System.arraycopy(data, row * cols, out, off, cols);
        }

        @Override
        public float dotRow(int row, float[] x, int xOff) {
            return Kernels.dot(data, row * cols, x, xOff, cols);
        }

        @Override
        public void addRowScaled(int row, float a, float[] y, int yOff) {
            Kernels.axpy(a, data, row * cols, y, yOff, cols);
        }

        @Override
        public Matrix transposed() {
            float[] t = new float[data.length];
            for (int r = 0; r < rows; r++) for (int c = 0; c < cols; c++) t[c * rows + r] = data[r * cols + c];
            return new F32(t, cols, rows);
        }

        @Override
        public long bytes() {
            return 4L * data.length;
        }
    }

    record Bf16(short[] data, int rows, int cols) implements Matrix {
        @Override
        public void matmulRows(float[] x, int tokens, int rowFrom, int rowTo, float[] y, int yStride) {
            Kernels.matmulRowsBf16(x, tokens, cols, data, rowFrom, rowTo, y, yStride);
        }

        @Override
        public void copyRow(int row, float[] out, int off) {
            for (int i = 0; i < cols; i++) out[off + i] = Float.intBitsToFloat(data[row * cols + i] << 16);
        }

        @Override
        public float dotRow(int row, float[] x, int xOff) {
            return Kernels.dotBf16(x, xOff, data, row * cols, cols);
        }

        @Override
        public void addRowScaled(int row, float a, float[] y, int yOff) {
            Kernels.axpyBf16(a, data, row * cols, y, yOff, cols);
        }

        @Override
        public Matrix transposed() {
            short[] t = new short[data.length];
            for (int r = 0; r < rows; r++) for (int c = 0; c < cols; c++) t[c * rows + r] = data[r * cols + c];
            return new Bf16(t, cols, rows);
        }

        @Override
        public long bytes() {
            return 2L * data.length;
        }
    }
}
