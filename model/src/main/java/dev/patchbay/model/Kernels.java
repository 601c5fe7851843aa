package dev.patchbay.model;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/** The Vector API inner loops of the transformer: dot products, matrix tiles, norms and activations. */
final class Kernels {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();
    /** As many 16-bit lanes as F has float lanes, widened to I and then reinterpreted as floats. */
    private static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(F.vectorBitSize() / 2));
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());

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
        int o = rowFrom;
        if (in % L == 0) {
            for (; o + 4 <= rowTo; o += 4) {
                int t = 0;
                for (; t + 4 <= tokens; t += 4) tile4x4(x, t, in, w, o * in, y, yStride, o);
                for (; t < tokens; t++) tile4x1(x, t, in, w, o * in, y, yStride, o);
            }
        }
        for (; o < rowTo; o++) {
            for (int t = 0; t < tokens; t++) y[t * yStride + o] = dot(x, t * in, w, o * in, in);
        }
    }

    /** Rows starting at w[wOff] (four of length in) against tokens t..t+3, into columns o..o+3 of y. */
    private static void tile4x4(float[] x, int t, int in, float[] w, int wOff, float[] y, int yStride, int o) {
        int x0 = t * in, x1 = x0 + in, x2 = x1 + in, x3 = x2 + in;
        int w0 = wOff, w1 = w0 + in, w2 = w1 + in, w3 = w2 + in;
        FloatVector a00 = FloatVector.zero(F), a01 = FloatVector.zero(F), a02 = FloatVector.zero(F), a03 = FloatVector.zero(F);
        FloatVector a10 = FloatVector.zero(F), a11 = FloatVector.zero(F), a12 = FloatVector.zero(F), a13 = FloatVector.zero(F);
        FloatVector a20 = FloatVector.zero(F), a21 = FloatVector.zero(F), a22 = FloatVector.zero(F), a23 = FloatVector.zero(F);
        FloatVector a30 = FloatVector.zero(F), a31 = FloatVector.zero(F), a32 = FloatVector.zero(F), a33 = FloatVector.zero(F);
        for (int i = 0; i < in; i += L) {
            FloatVector v0 = FloatVector.fromArray(F, x, x0 + i), v1 = FloatVector.fromArray(F, x, x1 + i);
            FloatVector v2 = FloatVector.fromArray(F, x, x2 + i), v3 = FloatVector.fromArray(F, x, x3 + i);
            FloatVector r = FloatVector.fromArray(F, w, w0 + i);
            a00 = v0.fma(r, a00); a01 = v1.fma(r, a01); a02 = v2.fma(r, a02); a03 = v3.fma(r, a03);
            r = FloatVector.fromArray(F, w, w1 + i);
            a10 = v0.fma(r, a10); a11 = v1.fma(r, a11); a12 = v2.fma(r, a12); a13 = v3.fma(r, a13);
            r = FloatVector.fromArray(F, w, w2 + i);
            a20 = v0.fma(r, a20); a21 = v1.fma(r, a21); a22 = v2.fma(r, a22); a23 = v3.fma(r, a23);
            r = FloatVector.fromArray(F, w, w3 + i);
            a30 = v0.fma(r, a30); a31 = v1.fma(r, a31); a32 = v2.fma(r, a32); a33 = v3.fma(r, a33);
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
        FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F), a2 = FloatVector.zero(F), a3 = FloatVector.zero(F);
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
            FloatVector.fromArray(F, x, xOff + i).fma(av, FloatVector.fromArray(F, y, yOff + i)).intoArray(y, yOff + i);
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
            FloatVector.fromArray(F, x, xOff + i).mul(iv).mul(FloatVector.fromArray(F, weight, i)).intoArray(out, outOff + i);
        }
        for (; i < n; i++) out[outOff + i] = x[xOff + i] * inv * weight[i];
    }

    /** gate = silu(gate) * up, elementwise over [from, to). */
    static void siluMul(float[] gate, float[] up, int from, int to) {
        for (int i = from; i < to; i++) {
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
            FloatVector.fromArray(F, y, yOff + i).add(FloatVector.fromArray(F, x, i)).intoArray(y, yOff + i);
        }
        for (; i < n; i++) y[yOff + i] += x[i];
    }

    /** BF16 to F32 is the 16 bits moved to the top of a float's 32. */
    private static FloatVector bf16(short[] w, int off) {
        return ((IntVector) ShortVector.fromArray(S, w, off).convertShape(VectorOperators.S2I, I, 0))
                .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    private static float bf16(short b) {
        return Float.intBitsToFloat(b << 16);
    }

    static float dotBf16(float[] x, int xOff, short[] w, int wOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        int i = 0;
        for (; i + 2 * L <= n; i += 2 * L) {
            acc0 = FloatVector.fromArray(F, x, xOff + i).fma(bf16(w, wOff + i), acc0);
            acc1 = FloatVector.fromArray(F, x, xOff + i + L).fma(bf16(w, wOff + i + L), acc1);
        }
        for (; i + L <= n; i += L) acc0 = FloatVector.fromArray(F, x, xOff + i).fma(bf16(w, wOff + i), acc0);
        float sum = acc0.add(acc1).reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) sum += x[xOff + i] * bf16(w[wOff + i]);
        return sum;
    }

    /**
     * {@link #matmulRows} with BF16 weights. One token reads the BF16 rows directly (the memory-bound decode case);
     * several tokens widen four rows at a time into a small F32 buffer and reuse it for every token, which keeps the
     * sixteen-sum tile free of conversions.
     */
    static void matmulRowsBf16(float[] x, int tokens, int in, short[] w, int rowFrom, int rowTo, float[] y, int yStride) {
        int o = rowFrom;
        if (in % L == 0) {
            float[] rows = tokens > 1 ? new float[4 * in] : null;
            for (; o + 4 <= rowTo; o += 4) {
                if (rows == null) {
                    tile4x1Bf16(x, 0, in, w, o, y, yStride);
                    continue;
                }
                widen(w, o * in, rows, 4 * in);
                int t = 0;
                for (; t + 4 <= tokens; t += 4) tile4x4(x, t, in, rows, 0, y, yStride, o);
                for (; t < tokens; t++) tile4x1(x, t, in, rows, 0, y, yStride, o);
            }
        }
        for (; o < rowTo; o++) {
            for (int t = 0; t < tokens; t++) y[t * yStride + o] = dotBf16(x, t * in, w, o * in, in);
        }
    }

    private static void widen(short[] w, int off, float[] out, int n) {
        int i = 0;
        for (; i + L <= n; i += L) bf16(w, off + i).intoArray(out, i);
        for (; i < n; i++) out[i] = bf16(w[off + i]);
    }

    /** Four rows against one token: the decode case, where four weight streams keep the memory system busy. */
    private static void tile4x1Bf16(float[] x, int t, int in, short[] w, int o, float[] y, int yStride) {
        int x0 = t * in, w0 = o * in, w1 = w0 + in, w2 = w1 + in, w3 = w2 + in;
        FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F), a2 = FloatVector.zero(F), a3 = FloatVector.zero(F);
        for (int i = 0; i < in; i += L) {
            FloatVector v = FloatVector.fromArray(F, x, x0 + i);
            a0 = v.fma(bf16(w, w0 + i), a0);
            a1 = v.fma(bf16(w, w1 + i), a1);
            a2 = v.fma(bf16(w, w2 + i), a2);
            a3 = v.fma(bf16(w, w3 + i), a3);
        }
        store(y, t * yStride + o, a0, a1, a2, a3);
    }

    /** y[yOff + i] += a * w[wOff + i] for i in [0, n), w in BF16. */
    static void axpyBf16(float a, short[] w, int wOff, float[] y, int yOff, int n) {
        FloatVector av = FloatVector.broadcast(F, a);
        int i = 0;
        for (; i + L <= n; i += L) bf16(w, wOff + i).fma(av, FloatVector.fromArray(F, y, yOff + i)).intoArray(y, yOff + i);
        for (; i < n; i++) y[yOff + i] += a * bf16(w[wOff + i]);
    }
}
