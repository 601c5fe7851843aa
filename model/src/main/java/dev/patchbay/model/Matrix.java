package dev.patchbay.model;

/**
 * A weight matrix {@code [rows, cols]}, row-major as Hugging Face stores {@code [out, in]}, so each output is a dot
 * product with one contiguous row.
 *
 * <p>BF16 and F16 checkpoints stay 16-bit in memory and are widened inside the kernels: a decode step streams every
 * weight once, so halving the bytes read nearly doubles single-sequence speed, and both widenings are exact (BF16 is a
 * shift, F16 a few bit operations and a multiply). F32 checkpoints are held as F32.
 */
sealed interface Matrix permits Matrix.F32, Matrix.Bf16, Matrix.F16 {
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

    /** Bytes of memory the values take. */
    long bytes();

    /** How the values are held: "F32", "BF16" or "F16", as safetensors names them. */
    String dtype();

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

        /** The {@code [cols, rows]} transpose. */
        public F32 transposed() {
            float[] t = new float[data.length];
            for (int r = 0; r < rows; r++) for (int c = 0; c < cols; c++) t[c * rows + r] = data[r * cols + c];
            return new F32(t, cols, rows);
        }

        @Override
        public long bytes() {
            return 4L * data.length;
        }

        @Override
        public String dtype() {
            return "F32";
        }
    }

    /** BF16 values packed two to an int as {@link Kernels#packHalves} lays them out; cols is a multiple of 2 lanes. */
    record Bf16(int[] packed, int rows, int cols) implements Matrix {
        /** Packs BF16 values, or widens them to F32 when rows do not split into whole vector blocks. */
        static Matrix of(short[] values, int rows, int cols) {
            if (Kernels.packable(cols)) return new Bf16(Kernels.packHalves(values, rows, cols), rows, cols);
            float[] f = new float[values.length];
            for (int i = 0; i < f.length; i++) f[i] = Float.intBitsToFloat(values[i] << 16);
            return new F32(f, rows, cols);
        }

        @Override
        public void matmulRows(float[] x, int tokens, int rowFrom, int rowTo, float[] y, int yStride) {
            Kernels.matmulRowsPacked(x, tokens, cols, packed, false, rowFrom, rowTo, y, yStride);
        }

        @Override
        public void copyRow(int row, float[] out, int off) {
            for (int i = 0; i < cols; i++)
                out[off + i] = Float.intBitsToFloat(Kernels.unpackHalf(packed, cols, row, i) << 16);
        }

        @Override
        public float dotRow(int row, float[] x, int xOff) {
            return Kernels.dotPacked(x, xOff, packed, row * cols / 2, cols);
        }

        @Override
        public void addRowScaled(int row, float a, float[] y, int yOff) {
            Kernels.axpyPacked(a, packed, row * cols / 2, y, yOff, cols);
        }

        @Override
        public long bytes() {
            return 4L * packed.length;
        }

        @Override
        public String dtype() {
            return "BF16";
        }
    }

    /** F16 values packed two to an int as {@link Kernels#packHalves} lays them out; cols is a multiple of 2 lanes. */
    record F16(int[] packed, int rows, int cols) implements Matrix {
        /** Packs F16 values, or widens them to F32 when rows do not split into whole vector blocks. */
        static Matrix of(short[] values, int rows, int cols) {
            if (Kernels.packable(cols)) return new F16(Kernels.packHalves(values, rows, cols), rows, cols);
            float[] f = new float[values.length];
            for (int i = 0; i < f.length; i++) f[i] = Float.float16ToFloat(values[i]);
            return new F32(f, rows, cols);
        }

        @Override
        public void matmulRows(float[] x, int tokens, int rowFrom, int rowTo, float[] y, int yStride) {
            Kernels.matmulRowsPacked(x, tokens, cols, packed, true, rowFrom, rowTo, y, yStride);
        }

        @Override
        public void copyRow(int row, float[] out, int off) {
            for (int i = 0; i < cols; i++)
                out[off + i] = Float.float16ToFloat(Kernels.unpackHalf(packed, cols, row, i));
        }

        @Override
        public float dotRow(int row, float[] x, int xOff) {
            return Kernels.dotPackedF16(x, xOff, packed, row * cols / 2, cols);
        }

        @Override
        public void addRowScaled(int row, float a, float[] y, int yOff) {
            Kernels.axpyPackedF16(a, packed, row * cols / 2, y, yOff, cols);
        }

        @Override
        public long bytes() {
            return 4L * packed.length;
        }

        @Override
        public String dtype() {
            return "F16";
        }
    }
}
