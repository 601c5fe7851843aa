package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import jdk.incubator.vector.FloatVector;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/** The F16 kernels against {@link Float#float16ToFloat} and against the same values held as F32. */
class HalfPrecisionKernelsTest {
    /** Values per vector block of a packed row. */
    private static final int BLOCK = 2 * FloatVector.SPECIES_PREFERRED.length();

    /** All 65,536 F16 bit patterns in order, as 64 rows of 1024. */
    private static short[] everyF16() {
        short[] all = new short[1 << 16];
        for (int i = 0; i < all.length; i++) all[i] = (short) i;
        return all;
    }

    private static void assertSameFloat(float actual, short f16) {
        // floatToIntBits tells +0 from -0 and each infinity apart, and maps every NaN to one pattern: compiled,
        // Float.float16ToFloat quiets signalling NaNs, interpreted it does not.
        assertThat(Float.floatToIntBits(actual))
                .as("F16 0x%04x", f16 & 0xffff)
                .isEqualTo(Float.floatToIntBits(Float.float16ToFloat(f16)));
    }

    @Test
    void vectorWideningEqualsFloat16ToFloatForEveryBitPattern() {
        short[] all = everyF16();
        int[] packed = Kernels.packHalves(all, 64, 1024);
        float[] wide = new float[all.length];
        Kernels.widenPackedF16(packed, 0, wide, all.length);
        // Packing reorders values within a block; widening restores the order.
        for (int i = 0; i < all.length; i++) assertSameFloat(wide[i], all[i]);
        for (int i = 0x7c01; i < 0x8000; i++) {
            // NaNs keep their sign and payload bits, signalling ones included.
            for (int sign : new int[] {0, 0x8000}) {
                assertThat(Float.floatToRawIntBits(wide[i | sign]))
                        .isEqualTo((sign << 16) | 0x7f800000 | (i & 0x3ff) << 13);
            }
        }
    }

    @Test
    void everyBitPatternIsCarriedExactlyThroughRowReadsAndScaledAdds() {
        short[] all = everyF16();
        Matrix m = Matrix.F16.of(all, 64, 1024);
        assertThat(m).isInstanceOf(Matrix.F16.class);
        float[] row = new float[1024];
        float[] added = new float[1024];
        for (int r = 0; r < 64; r++) {
            m.copyRow(r, row, 0);
            // y = -0 + 1 * w is w exactly, signed zeros included.
            Arrays.fill(added, -0f);
            m.addRowScaled(r, 1f, added, 0);
            for (int c = 0; c < 1024; c++) {
                assertSameFloat(row[c], all[r * 1024 + c]);
                assertSameFloat(added[c], all[r * 1024 + c]);
            }
        }
    }

    @Test
    void matrixProductsEqualThoseOfTheSameValuesHeldAsF32() {
        for (boolean bf16 : new boolean[] {false, true}) {
            SplittableRandom rng = new SplittableRandom(11);
            // Eleven rows (with several tokens: two tiles of four and three rows alone; with one token, BF16's pairs of
            // rows and one left over); three vector blocks a row.
            int rows = 11, cols = 3 * BLOCK, tokens = 6;
            short[] values = new short[rows * cols];
            float[] wide = new float[values.length];
            for (int i = 0; i < values.length; i++) {
                // Finite values of every exponent, subnormals and zeros included.
                short h;
                do h = (short) rng.nextInt(1 << 16);
                while (bf16 ? (h & 0x7f80) == 0x7f80 : (h & 0x7c00) == 0x7c00);
                values[i] = h;
                wide[i] = bf16 ? Float.intBitsToFloat(h << 16) : Float.float16ToFloat(h);
            }
            Matrix half = bf16 ? Matrix.Bf16.of(values, rows, cols) : Matrix.F16.of(values, rows, cols);
            Matrix f32 = new Matrix.F32(wide, rows, cols);
            float[] x = new float[tokens * cols];
            for (int i = 0; i < x.length; i++) x[i] = (float) rng.nextGaussian();

            for (int n : new int[] {1, tokens}) {
                // A range starting at an odd row, as a thread's share of the rows may.
                for (int from : new int[] {0, 3}) {
                    float[] yHalf = new float[n * rows], yF32 = new float[n * rows];
                    half.matmulRows(x, n, from, rows, yHalf, rows);
                    f32.matmulRows(x, n, from, rows, yF32, rows);
                    for (int t = 0; t < n; t++) {
                        for (int o = from; o < rows; o++) {
                            double scale = 0;
                            for (int i = 0; i < cols; i++)
                                scale += Math.abs((double) x[t * cols + i] * wide[o * cols + i]);
                            // The same products, summed in the same lanes; only a lane reduction's order may differ.
                            assertThat((double) yHalf[t * rows + o])
                                    .as("%s token %d row %d", bf16 ? "BF16" : "F16", t, o)
                                    .isCloseTo(yF32[t * rows + o], Offset.offset(1e-6 * scale));
                            assertThat((double) half.dotRow(o, x, t * cols))
                                    .isCloseTo(yF32[t * rows + o], Offset.offset(1e-6 * scale));
                        }
                    }
                }
            }
        }
    }

    @Test
    void rowsThatDoNotPackAreWidenedExactlyToF32() {
        short[] values = {(short) 0x3c00, (short) 0x8001, (short) 0x7c00};
        Matrix m = Matrix.F16.of(values, 1, 3);
        assertThat(m).isInstanceOf(Matrix.F32.class);
        assertThat(((Matrix.F32) m).data()).containsExactly(1f, -0x1p-24f, Float.POSITIVE_INFINITY);
    }
}
