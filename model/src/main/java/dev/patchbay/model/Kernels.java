package dev.patchbay.model;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** The Vector API inner loops of the transformer: dot products, matrix tiles, norms and activations. */
final class Kernels {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    /** Tokens per pass over the weight rows: 32 rows of 1536 floats (192 KB) stay in a core's L2 cache. */
    private static final int TOKEN_BLOCK = 32;

    private Kernels() {}

    /** sum a[aOff + i] * b[bOff + i] for i in [0, n). */
    static float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        int i = 0;
        for (; i + 2 * L <= n; i += 2 * L) {
            acc0 = FloatVector.fromArray(F, a, aOff + i).fma(FloatVector.fromArray(F, b, bOff + i), acc0);
            acc1 = FloatVector.fromArray(F, a, aOff + i + L).fma(FloatVector.fromArray(F, b, bOff + i + L), acc1);
        }
        for (; i + L <= n; i += L) {
            acc0 = FloatVector.fromArray(F, a, aOff + i).fma(FloatVector.fromArray(F, b, bOff + i), acc0);
        }
        float sum = acc0.add(acc1).reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) sum += a[aOff + i] * b[bOff + i];
        return sum;
    }

    /**
     * y[t][o] = sum_i x[t][i] * w[o][i] for tokens t in [0, tokens) and rows o in [rowFrom, rowTo), x of row length
     * {@code in}, y of row length {@code yStride}. Tiles of four rows by four tokens keep sixteen sums in registers,
     * so each loaded vector feeds four multiply-adds.
     */
    static void matmulRows(float[] x, int tokens, int in, float[] w, int rowFrom, int rowTo, float[] y, int yStride) {
        // Blocks of tokens small enough to stay in cache while every row passes over them (long prompts).
        for (int t0 = 0; t0 < tokens; t0 += TOKEN_BLOCK) {
            int t1 = Math.min(tokens, t0 + TOKEN_BLOCK);
            int o = rowFrom;
            if (in % L == 0) {
                for (; o + 4 <= rowTo; o += 4) {
                    int t = t0;
                    for (; t + 4 <= t1; t += 4) tile4x4(x, t, in, w, o * in, y, yStride, o);
                    for (; t < t1; t++) tile4x1(x, t, in, w, o * in, y, yStride, o);
                }
            }
            for (; o < rowTo; o++) {
                for (int t = t0; t < t1; t++) y[t * yStride + o] = dot(x, t * in, w, o * in, in);
            }
        }
    }

    /** Rows starting at w[wOff] (four of length in) against tokens t..t+3, into columns o..o+3 of y. */
    private static void tile4x4(float[] x, int t, int in, float[] w, int wOff, float[] y, int yStride, int o) {
        int x0 = t * in, x1 = x0 + in, x2 = x1 + in, x3 = x2 + in;
        int w0 = wOff, w1 = w0 + in, w2 = w1 + in, w3 = w2 + in;
        FloatVector a00 = FloatVector.zero(F),
                a01 = FloatVector.zero(F),
                a02 = FloatVector.zero(F),
                a03 = FloatVector.zero(F);
        FloatVector a10 = FloatVector.zero(F),
                a11 = FloatVector.zero(F),
                a12 = FloatVector.zero(F),
                a13 = FloatVector.zero(F);
        FloatVector a20 = FloatVector.zero(F),
                a21 = FloatVector.zero(F),
                a22 = FloatVector.zero(F),
                a23 = FloatVector.zero(F);
        FloatVector a30 = FloatVector.zero(F),
                a31 = FloatVector.zero(F),
                a32 = FloatVector.zero(F),
                a33 = FloatVector.zero(F);
        for (int i = 0; i < in; i += L) {
            FloatVector v0 = FloatVector.fromArray(F, x, x0 + i), v1 = FloatVector.fromArray(F, x, x1 + i);
            FloatVector v2 = FloatVector.fromArray(F, x, x2 + i), v3 = FloatVector.fromArray(F, x, x3 + i);
            FloatVector r = FloatVector.fromArray(F, w, w0 + i);
            a00 = v0.fma(r, a00);
            a01 = v1.fma(r, a01);
            a02 = v2.fma(r, a02);
            a03 = v3.fma(r, a03);
            r = FloatVector.fromArray(F, w, w1 + i);
            a10 = v0.fma(r, a10);
            a11 = v1.fma(r, a11);
            a12 = v2.fma(r, a12);
            a13 = v3.fma(r, a13);
            r = FloatVector.fromArray(F, w, w2 + i);
            a20 = v0.fma(r, a20);
            a21 = v1.fma(r, a21);
            a22 = v2.fma(r, a22);
            a23 = v3.fma(r, a23);
            r = FloatVector.fromArray(F, w, w3 + i);
            a30 = v0.fma(r, a30);
            a31 = v1.fma(r, a31);
            a32 = v2.fma(r, a32);
            a33 = v3.fma(r, a33);
        }
        store(y, t * yStride + o, a00, a10, a20, a30);
        store(y, (t + 1) * yStride + o, a01, a11, a21, a31);
        store(y, (t + 2) * yStride + o, a02, a12, a22, a32);
        store(y, (t + 3) * yStride + o, a03, a13, a23, a33);
    }

    private static void store(float[] y, int off, FloatVector r0, FloatVector r1, FloatVector r2, FloatVector r3) {
        y[off] = r0.reduceLanes(VectorOperators.ADD);
        y[off + 1] = r1.reduceLanes(VectorOperators.ADD);
        y[off + 2] = r2.reduceLanes(VectorOperators.ADD);
        y[off + 3] = r3.reduceLanes(VectorOperators.ADD);
    }

    private static void tile4x1(float[] x, int t, int in, float[] w, int wOff, float[] y, int yStride, int o) {
        int x0 = t * in, w0 = wOff, w1 = w0 + in, w2 = w1 + in, w3 = w2 + in;
        FloatVector a0 = FloatVector.zero(F),
                a1 = FloatVector.zero(F),
                a2 = FloatVector.zero(F),
                a3 = FloatVector.zero(F);
        for (int i = 0; i < in; i += L) {
            FloatVector v = FloatVector.fromArray(F, x, x0 + i);
            a0 = v.fma(FloatVector.fromArray(F, w, w0 + i), a0);
            a1 = v.fma(FloatVector.fromArray(F, w, w1 + i), a1);
            a2 = v.fma(FloatVector.fromArray(F, w, w2 + i), a2);
            a3 = v.fma(FloatVector.fromArray(F, w, w3 + i), a3);
        }
        store(y, t * yStride + o, a0, a1, a2, a3);
    }

    /** y[yOff + i] += a * x[xOff + i] for i in [0, n). */
    static void axpy(float a, float[] x, int xOff, float[] y, int yOff, int n) {
        FloatVector av = FloatVector.broadcast(F, a);
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector.fromArray(F, x, xOff + i)
                    .fma(av, FloatVector.fromArray(F, y, yOff + i))
                    .intoArray(y, yOff + i);
        }
        for (; i < n; i++) y[yOff + i] += a * x[xOff + i];
    }

    /** out = x / rms(x) * weight, over one row of n. */
    static void rmsNorm(float[] x, int xOff, float[] weight, float eps, float[] out, int outOff, int n) {
        float ss = dot(x, xOff, x, xOff, n);
        float inv = (float) (1.0 / Math.sqrt(ss / n + eps));
        int i = 0;
        FloatVector iv = FloatVector.broadcast(F, inv);
        for (; i + L <= n; i += L) {
            FloatVector.fromArray(F, x, xOff + i)
                    .mul(iv)
                    .mul(FloatVector.fromArray(F, weight, i))
                    .intoArray(out, outOff + i);
        }
        for (; i < n; i++) out[outOff + i] = x[xOff + i] * inv * weight[i];
    }

    /** x[i] = exp(x[i] - max) for i in [0, n); returns their sum (the softmax denominator). */
    static float expShifted(float[] x, int n, float max) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector e = FloatVector.fromArray(F, x, i).sub(max).lanewise(VectorOperators.EXP);
            e.intoArray(x, i);
            acc = acc.add(e);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) sum += x[i] = (float) Math.exp(x[i] - max);
        return sum;
    }

    /**
     * out[outOff + d] = scale * sum_j weights[j] * rows[offsets[first + j] + rowOff + d] for d in [0, dim), j in
     * [0, n): the attention-weighted sum of value rows, kept in registers four vectors at a time.
     */
    static void weightedRowSum(
            float[] rows,
            int[] offsets,
            int first,
            int rowOff,
            float[] weights,
            float scale,
            int n,
            float[] out,
            int outOff,
            int dim) {
        int d = 0;
        for (; d + 4 * L <= dim; d += 4 * L) {
            FloatVector a0 = FloatVector.zero(F),
                    a1 = FloatVector.zero(F),
                    a2 = FloatVector.zero(F),
                    a3 = FloatVector.zero(F);
            for (int j = 0; j < n; j++) {
                FloatVector p = FloatVector.broadcast(F, weights[j]);
                int r = offsets[first + j] + rowOff + d;
                a0 = FloatVector.fromArray(F, rows, r).fma(p, a0);
                a1 = FloatVector.fromArray(F, rows, r + L).fma(p, a1);
                a2 = FloatVector.fromArray(F, rows, r + 2 * L).fma(p, a2);
                a3 = FloatVector.fromArray(F, rows, r + 3 * L).fma(p, a3);
            }
            a0.mul(scale).intoArray(out, outOff + d);
            a1.mul(scale).intoArray(out, outOff + d + L);
            a2.mul(scale).intoArray(out, outOff + d + 2 * L);
            a3.mul(scale).intoArray(out, outOff + d + 3 * L);
        }
        for (; d + L <= dim; d += L) {
            FloatVector a = FloatVector.zero(F);
            for (int j = 0; j < n; j++)
                a = FloatVector.fromArray(F, rows, offsets[first + j] + rowOff + d)
                        .fma(FloatVector.broadcast(F, weights[j]), a);
            a.mul(scale).intoArray(out, outOff + d);
        }
        for (; d < dim; d++) {
            float sum = 0;
            for (int j = 0; j < n; j++) sum += weights[j] * rows[offsets[first + j] + rowOff + d];
            out[outOff + d] = sum * scale;
        }
    }

    /**
     * gate = silu(gate) * up, elementwise over [from, to). In vectors, with the Vector API's exp: a scalar Math.exp
     * per value took 8% of a 512-token prompt's time.
     */
    static void siluMul(float[] gate, float[] up, int from, int to) {
        int i = from;
        for (; i + L <= to; i += L) {
            FloatVector g = FloatVector.fromArray(F, gate, i);
            FloatVector e = g.neg().lanewise(VectorOperators.EXP);
            g.div(e.add(1f)).mul(FloatVector.fromArray(F, up, i)).intoArray(gate, i);
        }
        for (; i < to; i++) {
            float g = gate[i];
            gate[i] = g / (1f + (float) Math.exp(-g)) * up[i];
        }
    }

    /** y[i] += x[i] over [from, to). */
    static void add(float[] y, float[] x, int from, int to) {
        int i = from;
        for (; i + L <= to; i += L) {
            FloatVector.fromArray(F, y, i).add(FloatVector.fromArray(F, x, i)).intoArray(y, i);
        }
        for (; i < to; i++) y[i] += x[i];
    }

    /** y[yOff + i] += x[i] over the length of x. */
    static void add(float[] y, int yOff, float[] x) {
        int n = x.length, i = 0;
        for (; i + L <= n; i += L) {
            FloatVector.fromArray(F, y, yOff + i)
                    .add(FloatVector.fromArray(F, x, i))
                    .intoArray(y, yOff + i);
        }
        for (; i < n; i++) y[yOff + i] += x[i];
    }

    /*
     * Half-precision weights (BF16 or F16) are packed two to an int so that one int-vector load yields two float
     * vectors with no change of vector shape: in each block of 2L values of a row, lane i holds value i in its low
     * half and value L + i in its high half. BF16 to F32 is then a shift (low halves) or a mask (high halves); F16 to
     * F32 is a shift, a mask and a multiply, see highF16.
     */

    /** Whether rows of {@code cols} values can be packed (whole blocks of 2L). */
    static boolean packable(int cols) {
        return cols % (2 * L) == 0;
    }

    /** Packs 16-bit values (BF16 or F16 bits) of {@code rows} rows of {@code cols}. */
    static int[] packHalves(short[] values, int rows, int cols) {
        int[] packed = new int[rows * cols / 2];
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < cols; b += 2 * L) {
                int base = r * cols + b, out = (r * cols + b) / 2;
                for (int i = 0; i < L; i++)
                    packed[out + i] = (values[base + L + i] << 16) | (values[base + i] & 0xffff);
            }
        }
        return packed;
    }

    /** The 16 bits of value {@code col} of row {@code row}, as {@link #packHalves} placed them. */
    static short unpackHalf(int[] packed, int cols, int row, int col) {
        int b = col - col % (2 * L), i = col % (2 * L);
        int word = packed[(row * cols + b) / 2 + i % L];
        return (short) (i < L ? word : word >>> 16);
    }

    private static FloatVector low(IntVector v) {
        return v.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    private static FloatVector high(IntVector v) {
        return v.lanewise(VectorOperators.AND, 0xffff0000).reinterpretAsFloats();
    }

    private static FloatVector lowF16(IntVector v) {
        return highF16(v.lanewise(VectorOperators.LSHL, 16));
    }

    /**
     * The F16 values in the high halves of v's lanes, as F32; equal to {@link Float#float16ToFloat} for every value.
     * The arithmetic shift by 3 leaves the sign at bit 31 and moves exponent and mantissa to F32's places; the mask
     * clears the sign's copies and the low half. Read as F32, that is the value times 2^-112 (normal or subnormal,
     * exact either way), so one multiply restores it. Exponent 31 (infinity, NaN) then comes out at 2^16 and above
     * and is given F32's all-ones exponent, keeping sign and payload.
     */
    private static FloatVector highF16(IntVector v) {
        IntVector bits = v.lanewise(VectorOperators.ASHR, 3).lanewise(VectorOperators.AND, 0x8fffe000);
        VectorMask<Integer> special =
                bits.lanewise(VectorOperators.AND, 0x0fffffff).compare(VectorOperators.GE, 0x0f800000);
        IntVector scaled = bits.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts();
        return scaled.lanewise(VectorOperators.OR, 0x7f800000, special).reinterpretAsFloats();
    }

    /** x[xOff ..] · packed row values starting at packed[wOff] (n values, n a multiple of 2L). */
    static float dotPacked(float[] x, int xOff, int[] w, int wOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        for (int i = 0; i < n; i += 2 * L) {
            IntVector v = IntVector.fromArray(I, w, wOff + i / 2);
            acc0 = FloatVector.fromArray(F, x, xOff + i).fma(low(v), acc0);
            acc1 = FloatVector.fromArray(F, x, xOff + i + L).fma(high(v), acc1);
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    /**
     * Two packed BF16 rows starting at w[wOff] (each n values, n a multiple of 2L) against x[0 .. n), into y[yOff] and
     * y[yOff + 1]. Four independent sums where {@link #dotPacked} has two: one row's two chains of multiply-adds wait on
     * each other's latency, and so bound the one-token decode below memory bandwidth (measured on BF16 rows held in
     * cache, one thread: 12 to 14 GB/s one row at a time, 26 to 30 GB/s two at a time, and each vector of x is loaded
     * once for both rows). The widening is written out rather than called: C2 left calls (and boxed vectors) in a
     * four-row version that went through the helpers.
     */
    static void dotPacked2(float[] x, int[] w, int wOff, int n, float[] y, int yOff) {
        int w0 = wOff, w1 = w0 + n / 2;
        FloatVector a0 = FloatVector.zero(F), b0 = FloatVector.zero(F);
        FloatVector a1 = FloatVector.zero(F), b1 = FloatVector.zero(F);
        for (int i = 0; i < n; i += 2 * L) {
            FloatVector lo = FloatVector.fromArray(F, x, i), hi = FloatVector.fromArray(F, x, i + L);
            IntVector v = IntVector.fromArray(I, w, w0 + i / 2);
            a0 = lo.fma(v.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats(), a0);
            b0 = hi.fma(v.lanewise(VectorOperators.AND, 0xffff0000).reinterpretAsFloats(), b0);
            IntVector u = IntVector.fromArray(I, w, w1 + i / 2);
            a1 = lo.fma(u.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats(), a1);
            b1 = hi.fma(u.lanewise(VectorOperators.AND, 0xffff0000).reinterpretAsFloats(), b1);
        }
        y[yOff] = a0.add(b0).reduceLanes(VectorOperators.ADD);
        y[yOff + 1] = a1.add(b1).reduceLanes(VectorOperators.ADD);
    }

    /** {@link #dotPacked} for F16. */
    static float dotPackedF16(float[] x, int xOff, int[] w, int wOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        for (int i = 0; i < n; i += 2 * L) {
            IntVector v = IntVector.fromArray(I, w, wOff + i / 2);
            acc0 = FloatVector.fromArray(F, x, xOff + i).fma(lowF16(v), acc0);
            acc1 = FloatVector.fromArray(F, x, xOff + i + L).fma(highF16(v), acc1);
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    /** y[yOff + i] += a * value i of the packed row at packed[wOff], n values. */
    static void axpyPacked(float a, int[] w, int wOff, float[] y, int yOff, int n) {
        FloatVector av = FloatVector.broadcast(F, a);
        for (int i = 0; i < n; i += 2 * L) {
            IntVector v = IntVector.fromArray(I, w, wOff + i / 2);
            low(v).fma(av, FloatVector.fromArray(F, y, yOff + i)).intoArray(y, yOff + i);
            high(v).fma(av, FloatVector.fromArray(F, y, yOff + i + L)).intoArray(y, yOff + i + L);
        }
    }

    /** {@link #axpyPacked} for F16. */
    static void axpyPackedF16(float a, int[] w, int wOff, float[] y, int yOff, int n) {
        FloatVector av = FloatVector.broadcast(F, a);
        for (int i = 0; i < n; i += 2 * L) {
            IntVector v = IntVector.fromArray(I, w, wOff + i / 2);
            lowF16(v).fma(av, FloatVector.fromArray(F, y, yOff + i)).intoArray(y, yOff + i);
            highF16(v).fma(av, FloatVector.fromArray(F, y, yOff + i + L)).intoArray(y, yOff + i + L);
        }
    }

    /** out[0 .. n) = the n packed BF16 values starting at packed[wOff], as F32. */
    static void widenPacked(int[] w, int wOff, float[] out, int n) {
        for (int i = 0; i < n; i += 2 * L) {
            IntVector v = IntVector.fromArray(I, w, wOff + i / 2);
            low(v).intoArray(out, i);
            high(v).intoArray(out, i + L);
        }
    }

    /** {@link #widenPacked} for F16. */
    static void widenPackedF16(int[] w, int wOff, float[] out, int n) {
        for (int i = 0; i < n; i += 2 * L) {
            IntVector v = IntVector.fromArray(I, w, wOff + i / 2);
            lowF16(v).intoArray(out, i);
            highF16(v).intoArray(out, i + L);
        }
    }

    /**
     * {@link #matmulRows} with packed BF16 or F16 weights. One token reads the packed rows directly, one row at a time
     * (the memory-bound decode case); several tokens widen four rows at a time into a small F32 buffer and reuse it for
     * every token.
     */
    static void matmulRowsPacked(
            float[] x, int tokens, int in, int[] w, boolean f16, int rowFrom, int rowTo, float[] y, int yStride) {
        if (tokens == 1) {
            // The weights are read straight from the packed rows (no widened copy), BF16 two rows at a time (see
            // dotPacked2), F16 one: a four-row tile through a buffer was slower at one token (RealExecutorBenchmark's
            // batch 1, about 30 against 47 tokens/s), and several F16 conversions in one loop exceed the code C2
            // inlines into one method, leaving calls that box every vector.
            if (f16) for (int o = rowFrom; o < rowTo; o++) y[o] = dotPackedF16(x, 0, w, o * in / 2, in);
            else {
                int o = rowFrom;
                for (; o + 2 <= rowTo; o += 2) dotPacked2(x, w, o * in / 2, in, y, o);
                if (o < rowTo) y[o] = dotPacked(x, 0, w, o * in / 2, in);
            }
            return;
        }
        float[] rows = new float[4 * in];
        for (int t0 = 0; t0 < tokens; t0 += TOKEN_BLOCK) {
            int t1 = Math.min(tokens, t0 + TOKEN_BLOCK);
            int o = rowFrom;
            for (; o + 4 <= rowTo; o += 4) {
                if (f16) widenPackedF16(w, o * in / 2, rows, 4 * in);
                else widenPacked(w, o * in / 2, rows, 4 * in);
                int t = t0;
                for (; t + 4 <= t1; t += 4) tile4x4(x, t, in, rows, 0, y, yStride, o);
                for (; t < t1; t++) tile4x1(x, t, in, rows, 0, y, yStride, o);
            }
            for (; o < rowTo; o++) {
                for (int t = t0; t < t1; t++) {
                    y[t * yStride + o] =
                            f16 ? dotPackedF16(x, t * in, w, o * in / 2, in) : dotPacked(x, t * in, w, o * in / 2, in);
                }
            }
        }
    }
}
