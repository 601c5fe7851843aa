package dev.patchbay.model;

import dev.patchbay.engine.SamplingParams;
import java.util.Arrays;
import java.util.random.RandomGenerator;

/** Picks the next token from logits: greedy at temperature 0, else temperature, top-k and top-p in vLLM's order. */
public final class Sampler {
    private Sampler() {}

    public static int sample(float[] logits, SamplingParams p, RandomGenerator rng) {
        if (p.temperature() == 0) return argmax(logits);
        int n = logits.length;
        float max = logits[argmax(logits)];
        double invT = 1.0 / p.temperature();
        float[] prob = new float[n];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            prob[i] = (float) Math.exp((logits[i] - max) * invT);
            sum += prob[i];
        }
        boolean topK = p.topK() > 0 && p.topK() < n;
        if (!topK && p.topP() >= 1) return draw(prob, sum, rng);

        // Probabilities are non-negative, so their float bits sort like the values: (bits << 32 | id) sorts by prob.
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) keys[i] = ((long) Float.floatToRawIntBits(prob[i]) << 32) | i;
        Arrays.sort(keys);
        int keep = topK ? p.topK() : n;
        double kept = 0;
        for (int j = 0; j < keep; j++) kept += prob[(int) keys[n - 1 - j]];
        if (p.topP() < 1) {
            double mass = 0;
            int j = 0;
            while (j < keep) {
                mass += prob[(int) keys[n - 1 - j]] / kept;
                j++;
                if (mass >= p.topP()) break;
            }
            keep = j;
        }
        double total = 0;
        for (int j = 0; j < keep; j++) total += prob[(int) keys[n - 1 - j]];
        double r = rng.nextDouble() * total;
        for (int j = 0; j < keep; j++) {
            int id = (int) keys[n - 1 - j];
            r -= prob[id];
            if (r <= 0) return id;
        }
        return (int) keys[n - keep];
    }

    private static int draw(float[] prob, double sum, RandomGenerator rng) {
        double r = rng.nextDouble() * sum;
        int last = 0;
        for (int i = 0; i < prob.length; i++) {
            if (prob[i] > 0) last = i;
            r -= prob[i];
            if (r <= 0) return i;
        }
        return last;
    }

    public static int argmax(float[] x) {
        int best = 0;
        for (int i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
        return best;
    }
}
