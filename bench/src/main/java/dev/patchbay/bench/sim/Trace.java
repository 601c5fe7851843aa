package dev.patchbay.bench.sim;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A request stream, fixed before any policy runs so every policy sees the same one: arrival time,
 * adapter, prompt and output length of each request, in arrival order.
 */
public record Trace(long[] arrivalNanos, int[] adapter, int[] promptTokens, int[] outputTokens) {

    public int size() {
        return arrivalNanos.length;
    }

    /**
     * Draws a stream at {@code rate} requests/s for {@code durationNanos}. Lengths are log-normal with the
     * given means (ShareGPT-like: 220 prompt, 190 output) and log-space sigma, capped so that prompt plus
     * output fit {@code maxModelLen}. Arrivals, adapters and lengths use separate random streams.
     */
    public static Trace generate(
            Workload w,
            double rate,
            long durationNanos,
            Arrivals arrivals,
            Lengths lengths,
            int maxModelLen,
            long seed) {
        SplittableRandom root = new SplittableRandom(seed);
        SplittableRandom time = root.split(), pick = root.split(), len = root.split();
        int capacity = (int) Math.min(Integer.MAX_VALUE - 8, rate * durationNanos / 1e9 * 1.2 + 64);
        long[] at = new long[capacity];
        int[] ad = new int[capacity], in = new int[capacity], out = new int[capacity];
        int n = 0;
        double t = 0;
        while (true) {
            t += arrivals.nextGapSeconds(rate, time);
            long nanos = Math.round(t * 1e9);
            if (nanos >= durationNanos) break;
            if (n == at.length) {
                int grown = at.length * 2;
                at = Arrays.copyOf(at, grown);
                ad = Arrays.copyOf(ad, grown);
                in = Arrays.copyOf(in, grown);
                out = Arrays.copyOf(out, grown);
            }
            at[n] = nanos;
            ad[n] = w.adapterIndex(pick.nextDouble());
            int prompt = Math.clamp(lengths.prompt(len), 1, maxModelLen - 2);
            in[n] = prompt;
            out[n] = Math.clamp(lengths.output(len), 1, maxModelLen - prompt - 1);
            n++;
        }
        return new Trace(Arrays.copyOf(at, n), Arrays.copyOf(ad, n), Arrays.copyOf(in, n), Arrays.copyOf(out, n));
    }

    /** Log-normal prompt and output lengths with the given means and log-space sigma. */
    public record Lengths(double promptMean, double outputMean, double sigma) {
        public static final Lengths SHAREGPT_LIKE = new Lengths(220, 190, 0.8);

        int prompt(SplittableRandom rnd) {
            return draw(promptMean, rnd);
        }

        int output(SplittableRandom rnd) {
            return draw(outputMean, rnd);
        }

        private int draw(double mean, SplittableRandom rnd) {
            double mu = Math.log(mean) - sigma * sigma / 2; // so that E[X] = mean
            return (int) Math.max(1, Math.round(Math.exp(mu + sigma * Arrivals.normal(rnd))));
        }
    }
}
