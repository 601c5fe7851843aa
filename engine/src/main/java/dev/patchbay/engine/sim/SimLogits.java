package dev.patchbay.engine.sim;

import dev.patchbay.engine.exec.Logprobs;
import dev.patchbay.engine.exec.TokenLogprobs;

/**
 * The simulated model's next-token distribution, made up so that log probabilities are well-formed and
 * repeatable: logits are a hash of the position, the token before it and each candidate, spread over (-8, 0],
 * with the token actually chosen (sampled, or the prompt's own) lifted above all others.
 */
final class SimLogits {
    private SimLogits() {}

    /** The log probabilities of {@code chosen} at {@code position}, after {@code previous}. */
    static TokenLogprobs logprobs(int vocab, int position, int previous, int chosen, int top) {
        float[] logits = new float[vocab];
        long base = mix(((long) position << 32) ^ (previous & 0xFFFFFFFFL));
        for (int i = 0; i < vocab; i++) logits[i] = -8f * ((mix(base + i) >>> 40) / (float) (1L << 24));
        logits[chosen] = 1f;
        return Logprobs.of(logits, chosen, top);
    }

    /** SplitMix64's finalizer. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
