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

        long[] keys = candidates(prob, sum, topK ? p.topK() : 0, p.topP());
        int m = keys.length;
        int keep = topK ? Math.min(p.topK(), m) : m;
        // Top-p's mass is measured within what top-k kept, or within the whole vocabulary without top-k.
        double kept = topK ? 0 : sum;
        if (topK) for (int j = 0; j < keep; j++) kept += prob[(int) keys[m - 1 - j]];
        if (p.topP() < 1) {
            double mass = 0;
            int j = 0;
            while (j < keep) {
                mass += prob[(int) keys[m - 1 - j]] / kept;
                j++;
                if (mass >= p.topP()) break;
            }
            keep = j;
        }
        double total = 0;
        for (int j = 0; j < keep; j++) total += prob[(int) keys[m - 1 - j]];
        double r = rng.nextDouble() * total;
        for (int j = 0; j < keep; j++) {
            int id = (int) keys[m - 1 - j];
            r -= prob[id];
            if (r <= 0) return id;
        }
        return (int) keys[m - keep];
    }

    /**
     * The tokens top-k and top-p can keep, sorted by probability (ascending; key = float bits << 32 | id, which sorts
     * like the probability since probabilities are not negative). Rather than sorting the whole vocabulary, it takes
     * the tokens above a threshold, lowered until they hold k tokens or, without top-k, a mass of at least top-p:
     * every token the filters keep is then among them.
     */
    private static long[] candidates(float[] prob, double sum, int topK, double topP) {
        float max = 0;
        for (float v : prob) max = Math.max(max, v);
        for (double threshold = max * 1e-3; ; threshold *= 1e-3) {
            if (threshold < 1e-30) threshold = 0;
            int count = 0;
            double mass = 0;
            for (float v : prob) {
                if (v >= threshold) {
                    count++;
                    mass += v;
                }
            }
            boolean enough = topK > 0 ? count >= topK : mass >= topP * sum;
            if (enough || threshold == 0) {
                long[] keys = new long[count];
                for (int i = 0, j = 0; i < prob.length; i++) {
                    if (prob[i] >= threshold) keys[j++] = ((long) Float.floatToRawIntBits(prob[i]) << 32) | i;
                }
                Arrays.sort(keys);
                return keys;
            }
        }
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
