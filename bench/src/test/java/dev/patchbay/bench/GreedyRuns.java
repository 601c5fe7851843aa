package dev.patchbay.bench;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.tensor.AbstractTensor;
import com.github.tjake.jlama.tensor.KvBufferCache;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.exec.ScheduledSequence;
import dev.patchbay.model.LlamaExecutor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/**
 * Greedy generation from token ids on Patchbay's executor and on Jlama, keeping every step's logits: step 0's are
 * those after the prompt, step k's those after the k-th generated token.
 */
final class GreedyRuns {
    static final int BLOCK_SIZE = 8;
    static final int BLOCKS_PER_SEQUENCE = 8;

    private GreedyRuns() {}

    /** The greedy tokens and the logits each was taken from. */
    record Trace(int[] tokens, float[][] logits) {}

    /** One Patchbay request: its prompt and its adapter's slot, -1 for the base model. */
    record Request(int[] prompt, int adapterSlot) {
        static Request base(int[] prompt) {
            return new Request(prompt, -1);
        }
    }

    /** Runs all requests in the same batch: one step prefills every prompt, then each step decodes one token of each. */
    static List<Trace> patchbay(LlamaExecutor executor, List<Request> requests, int steps) {
        int n = requests.size();
        int[][] tokens = new int[n][steps];
        float[][][] logits = new float[n][steps][];
        int[] next = null;
        for (int step = 0; step < steps; step++) {
            List<ScheduledSequence> batch = new ArrayList<>();
            for (int s = 0; s < n; s++) {
                Request r = requests.get(s);
                int[] blocks = IntStream.range(s * BLOCKS_PER_SEQUENCE, (s + 1) * BLOCKS_PER_SEQUENCE)
                        .toArray();
                int[] in = step == 0 ? r.prompt() : new int[] {next[s]};
                int start = step == 0 ? 0 : r.prompt().length + step - 1;
                if (start + in.length > BLOCK_SIZE * BLOCKS_PER_SEQUENCE)
                    throw new IllegalArgumentException("sequence too long");
                batch.add(new ScheduledSequence(
                        s,
                        in,
                        start,
                        blocks,
                        r.adapterSlot(),
                        true,
                        SamplingParams.greedy(steps),
                        new SplittableRandom(s),
                        r.prompt(),
                        step));
            }
            float[][] out = executor.forward(batch);
            next = new int[n];
            for (int s = 0; s < n; s++) {
                logits[s][step] = out[s];
                next[s] = tokens[s][step] = argmax(out[s]);
            }
        }
        List<Trace> traces = new ArrayList<>();
        for (int s = 0; s < n; s++) traces.add(new Trace(tokens[s], logits[s]));
        return traces;
    }

    /** Jlama's forward pass over the prompt, then one token at a time, on a KV buffer of its own. */
    static Trace jlama(AbstractModel model, int[] prompt, int steps) {
        int vocab = model.getConfig().vocabularySize;
        int[] tokens = new int[steps];
        float[][] logits = new float[steps][];
        KvBufferCache.KvBuffer kv = new KvBufferCache(model).getEphemeralKvBuffer();
        try (kv;
                AbstractTensor out = model.makeDenseTensor(vocab)) {
            // As Jlama's own generate does: the prompt's last row is sampled; temperature 0 is its argmax.
            AbstractTensor hidden = model.batchForward(prompt, 0, kv);
            tokens[0] = model.sample(hidden.slice(hidden.shape().first() - 1), 0f, 0f, out);
            hidden.close();
            logits[0] = read(out, vocab);
            for (int step = 1; step < steps; step++) {
                AbstractTensor h = model.forward(tokens[step - 1], prompt.length + step - 1, kv, Optional.empty());
                tokens[step] = model.sample(h, 0f, 0f, out);
                h.close();
                logits[step] = read(out, vocab);
            }
        }
        return new Trace(tokens, logits);
    }

    /**
     * Jlama on a model whose every layer sees only the last {@code window} positions: each step runs the last
     * {@code window} tokens afresh. Exact for a one-layer model only, where a position's keys and values depend on
     * its own token alone (RoPE scores depend on distances, so starting the window at position 0 changes nothing).
     */
    static Trace jlamaWindowed(AbstractModel model, int[] prompt, int steps, int window) {
        int[] tokens = new int[steps];
        float[][] logits = new float[steps][];
        int[] sequence = prompt;
        for (int step = 0; step < steps; step++) {
            int[] last = Arrays.copyOfRange(sequence, Math.max(0, sequence.length - window), sequence.length);
            Trace t = jlama(model, last, 1);
            tokens[step] = t.tokens()[0];
            logits[step] = t.logits()[0];
            sequence = Arrays.copyOf(sequence, sequence.length + 1);
            sequence[sequence.length - 1] = tokens[step];
        }
        return new Trace(tokens, logits);
    }

    private static float[] read(AbstractTensor logits, int vocab) {
        float[] r = new float[vocab];
        for (int i = 0; i < vocab; i++) r[i] = logits.get(0, i);
        return r;
    }

    /** The first index of the largest value, as Jlama's greedy sampling picks it. */
    static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) if (v[i] > v[best]) best = i;
        return best;
    }
}
