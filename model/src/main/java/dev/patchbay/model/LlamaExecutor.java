package dev.patchbay.model;

import dev.patchbay.engine.adapter.AdapterSpec;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.Executor;
import dev.patchbay.engine.exec.LoadedAdapter;
import dev.patchbay.engine.exec.Logprobs;
import dev.patchbay.engine.exec.ScheduledSequence;
import dev.patchbay.engine.exec.StepResult;
import dev.patchbay.engine.exec.TokenLogprobs;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalInt;
import java.util.stream.IntStream;

/**
 * Runs a Llama-family model on the CPU: every token of a step (prompt chunks and decodes of all sequences) goes
 * through each projection together, so a weight row is read once per step; attention reads each sequence's keys
 * and values from its own KV blocks, only the last ones on layers with a sliding window (the blocks before stay
 * allocated); each sequence's LoRA adapter is added in shrink/expand form, tokens grouped by adapter.
 */
public final class LlamaExecutor implements Executor {
    private static final int Q = 0, K = 1, V = 2, O = 3, GATE = 4, UP = 5, DOWN = 6;
    /** Prompt positions whose logits are computed together for prompt log probabilities. */
    private static final int PROMPT_ROWS = 32;

    private final ModelConfig c;
    private final LlamaWeights w;
    private final Rope rope;
    private final int[] windows;
    private final Parallel parallel;
    private final int numKvBlocks;
    private final int blockSize;
    private final int kvDim;
    private final int qDim;
    private final float[][] keyCache;
    private final float[][] valueCache;
    private final LoraWeights[] slots;

    /** {@code windows}: each layer's sliding window in positions, {@link SlidingWindow#NONE} for full attention. */
    LlamaExecutor(
            ModelConfig config,
            LlamaWeights weights,
            Rope rope,
            int[] windows,
            int numKvBlocks,
            int blockSize,
            int maxLoras,
            int threads) {
        this.c = config;
        this.w = weights;
        this.rope = rope;
        this.windows = windows;
        this.parallel = new Parallel(threads);
        this.numKvBlocks = numKvBlocks;
        this.blockSize = blockSize;
        this.kvDim = config.numKvHeads() * config.headDim();
        this.qDim = config.numHeads() * config.headDim();
        long perLayer = (long) numKvBlocks * blockSize * kvDim;
        if (perLayer > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException(
                    numKvBlocks + " KV blocks of " + blockSize + " tokens exceed a layer's cache limit");
        }
        this.keyCache = new float[config.numLayers()][(int) perLayer];
        this.valueCache = new float[config.numLayers()][(int) perLayer];
        this.slots = new LoraWeights[maxLoras];
    }

    public ModelConfig config() {
        return c;
    }

    /** Bytes of KV cache this executor holds. */
    public long kvCacheBytes() {
        return 2L * c.numLayers() * keyCache[0].length * Float.BYTES;
    }

    /** The blocks its cache has room for: the engine must plan with exactly these. */
    @Override
    public OptionalInt kvCacheBlocks() {
        return OptionalInt.of(numKvBlocks);
    }

    /**
     * Heap a step of {@code tokens} tokens, {@code sequences} of them sampled, allocates at its peak: the arrays
     * {@link #forward} keeps across a layer and the logits. The KV cache is sized after it, as vLLM profiles a
     * step of max_num_batched_tokens before sizing its cache.
     */
    static long stepActivationBytes(ModelConfig c, int tokens, int sequences) {
        long t = tokens;
        long sampled = Math.min(tokens, sequences);
        int q = c.numHeads() * c.headDim(), kv = c.numKvHeads() * c.headDim();
        long perToken = 3L * c.hiddenSize() + 2L * q + 2L * kv + 2L * c.intermediateSize() + c.headDim() + 3;
        // The logits of all sampled sequences, then a copy per sequence; their final norms.
        long logits = sampled * (2L * c.vocabSize() + c.hiddenSize());
        return (t * perToken + logits) * Float.BYTES;
    }

    @Override
    public LoadedAdapter loadAdapter(AdapterSpec spec) throws IOException {
        LoraWeights lora = LoraWeights.load(spec, c);
        return new LoadedAdapter(spec, lora, lora.bytes());
    }

    @Override
    public long modeledLoadNanos(AdapterSpec spec) {
        return 0;
    }

    @Override
    public long activate(int slot, LoadedAdapter adapter) {
        if (!(adapter.weights() instanceof LoraWeights lora)) {
            throw new IllegalArgumentException("adapter " + adapter.spec().name() + " was not loaded by this executor");
        }
        slots[slot] = lora;
        return 0;
    }

    @Override
    public void deactivate(int slot) {
        slots[slot] = null;
    }

    @Override
    public StepResult execute(Batch batch) {
        List<ScheduledSequence> seqs = batch.sequences();
        float[] hidden = hidden(seqs);
        float[][] logits = logits(seqs, hidden);
        int[] next = new int[seqs.size()];
        boolean wantsLogprobs =
                seqs.stream().anyMatch(q -> q.sample() && q.params().logprobs() != null);
        TokenLogprobs[] sampleLogprobs = wantsLogprobs ? new TokenLogprobs[seqs.size()] : null;
        // Each sequence draws from its own random stream, so sampling them in parallel stays reproducible.
        parallel.forRange(next.length, 1, (from, to) -> {
            for (int s = from; s < to; s++) {
                ScheduledSequence seq = seqs.get(s);
                next[s] = logits[s] == null ? -1 : Sampler.sample(logits[s], seq.params(), seq.rng());
                // Raw log probabilities: of the logits the sampler was given, before its temperature and filters.
                if (logits[s] != null && seq.params().logprobs() != null) {
                    sampleLogprobs[s] =
                            Logprobs.of(logits[s], next[s], seq.params().logprobs());
                }
            }
        });
        return new StepResult(next, 0, sampleLogprobs, promptLogprobs(seqs, hidden));
    }

    @Override
    public void close() {
        parallel.close();
    }

    /**
     * Runs one step and returns, for each sequence that wants a sample, the logits after its last token (null for
     * the others). The tokens' keys and values are stored in the sequences' KV blocks.
     */
    public float[][] forward(List<ScheduledSequence> seqs) {
        return logits(seqs, hidden(seqs));
    }

    /** Runs the layers over the step's tokens; returns each token's hidden state before the final norm. */
    private float[] hidden(List<ScheduledSequence> seqs) {
        int n = seqs.stream().mapToInt(s -> s.tokens().length).sum();
        int h = c.hiddenSize(), inter = c.intermediateSize(), headDim = c.headDim();
        int[] seqOf = new int[n], pos = new int[n], slotOf = new int[n];
        float[] x = new float[n * h];
        float[] ropeTable = new float[n * headDim];
        int t = 0;
        for (int s = 0; s < seqs.size(); s++) {
            ScheduledSequence seq = seqs.get(s);
            checkSequence(seq);
            for (int i = 0; i < seq.tokens().length; i++, t++) {
                int token = seq.tokens()[i];
                if (token < 0 || token >= c.vocabSize()) {
                    throw new IllegalArgumentException(
                            "token id " + token + " is outside the vocabulary of " + c.vocabSize());
                }
                seqOf[t] = s;
                pos[t] = seq.startPosition() + i;
                slotOf[t] = seq.adapterSlot();
                w.embedTokens().copyRow(token, x, t * h);
                rope.table(pos[t], ropeTable, t * headDim);
            }
        }
        int[] loraOrder = loraOrder(slotOf);

        float[] xb = new float[n * h];
        float[] q = new float[n * qDim], k = new float[n * kvDim], v = new float[n * kvDim];
        float[] att = new float[n * qDim];
        float[] out = new float[n * h];
        float[] gate = new float[n * inter], up = new float[n * inter];
        float eps = (float) c.rmsNormEps();
        for (int l = 0; l < c.numLayers(); l++) {
            LlamaWeights.Layer layer = w.layers()[l];
            norm(x, layer.attnNorm(), eps, xb, n);
            matmul(xb, n, new Matrix[] {layer.wq(), layer.wk(), layer.wv()}, new float[][] {q, k, v});
            if (layer.bq() != null) {
                addBias(q, layer.bq(), n);
                addBias(k, layer.bk(), n);
                addBias(v, layer.bv(), n);
            }
            applyLora(l, new int[] {Q, K, V}, xb, new float[][] {q, k, v}, loraOrder, slotOf);
            for (int i = 0; i < n; i++) {
                for (int hd = 0; hd < c.numHeads(); hd++)
                    rope.rotate(q, i * qDim + hd * headDim, ropeTable, i * headDim);
                for (int hd = 0; hd < c.numKvHeads(); hd++)
                    rope.rotate(k, i * kvDim + hd * headDim, ropeTable, i * headDim);
                int slot = cacheSlot(seqs.get(seqOf[i]).blockTable(), pos[i]);
                System.arraycopy(k, i * kvDim, keyCache[l], slot * kvDim, kvDim);
                System.arraycopy(v, i * kvDim, valueCache[l], slot * kvDim, kvDim);
            }
            attention(l, seqs, seqOf, pos, q, att, n);
            matmul(att, n, new Matrix[] {layer.wo()}, new float[][] {out});
            applyLora(l, new int[] {O}, att, new float[][] {out}, loraOrder, slotOf);
            Kernels.add(x, out, 0, n * h);

            norm(x, layer.ffnNorm(), eps, xb, n);
            matmul(xb, n, new Matrix[] {layer.wGate(), layer.wUp()}, new float[][] {gate, up});
            applyLora(l, new int[] {GATE, UP}, xb, new float[][] {gate, up}, loraOrder, slotOf);
            parallel.forRange(n * inter, 4096, (from, to) -> Kernels.siluMul(gate, up, from, to));
            matmul(gate, n, new Matrix[] {layer.wDown()}, new float[][] {out});
            applyLora(l, new int[] {DOWN}, gate, new float[][] {out}, loraOrder, slotOf);
            Kernels.add(x, out, 0, n * h);
        }
        return x;
    }

    private void checkSequence(ScheduledSequence seq) {
        if (seq.tokens().length == 0)
            throw new IllegalArgumentException("request " + seq.requestId() + ": no tokens to process");
        int last = seq.startPosition() + seq.tokens().length - 1;
        if (seq.startPosition() < 0 || last / blockSize >= seq.blockTable().length) {
            throw new IllegalArgumentException("request " + seq.requestId() + ": position " + last + " lies beyond its "
                    + seq.blockTable().length + " KV blocks of " + blockSize);
        }
        for (int i = 0; i <= last / blockSize; i++) {
            int b = seq.blockTable()[i];
            if (b < 0 || b >= numKvBlocks) {
                throw new IllegalArgumentException(
                        "request " + seq.requestId() + ": KV block " + b + " is outside [0, " + numKvBlocks + ")");
            }
        }
        int slot = seq.adapterSlot();
        if (slot >= slots.length || (slot >= 0 && slots[slot] == null)) {
            throw new IllegalArgumentException(
                    "request " + seq.requestId() + ": adapter slot " + slot + " holds no adapter");
        }
    }

    private int cacheSlot(int[] blockTable, int position) {
        return blockTable[position / blockSize] * blockSize + position % blockSize;
    }

    /** Token indices that use an adapter, grouped by slot so each adapter's weights stay in cache while used. */
    private static int[] loraOrder(int[] slotOf) {
        return IntStream.range(0, slotOf.length)
                .filter(i -> slotOf[i] >= 0)
                .boxed()
                .sorted(Comparator.comparingInt(i -> slotOf[i]))
                .mapToInt(Integer::intValue)
                .toArray();
    }

    private void norm(float[] x, float[] weight, float eps, float[] out, int n) {
        int h = c.hiddenSize();
        parallel.forRange(n, 64, (from, to) -> {
            for (int i = from; i < to; i++) Kernels.rmsNorm(x, i * h, weight, eps, out, i * h, h);
        });
    }

    private static void addBias(float[] y, float[] bias, int n) {
        for (int i = 0; i < n; i++) Kernels.add(y, i * bias.length, bias);
    }

    /** ys[p] = x · ws[p]ᵀ for each projection p, all their rows split across the threads in one go. */
    private void matmul(float[] x, int n, Matrix[] ws, float[][] ys) {
        int totalRows = 0;
        for (Matrix m : ws) totalRows += m.rows();
        // Chunks of whole four-row tiles, so every thread runs the tiled kernel.
        int quads = (totalRows + 3) / 4;
        int total = totalRows;
        parallel.forRange(quads, 4, (fromQuad, toQuad) -> {
            int from = fromQuad * 4, to = Math.min(total, toQuad * 4);
            int base = 0;
            for (int p = 0; p < ws.length; p++) {
                int rows = ws[p].rows();
                int lo = Math.max(from, base), hi = Math.min(to, base + rows);
                if (lo < hi) ws[p].matmulRows(x, n, lo - base, hi - base, ys[p], rows);
                base += rows;
            }
        });
    }

    /**
     * ys[p][t] += scale · (x[t] · Aᵀ) · Bᵀ for each projection p of the same input and each token t whose adapter
     * targets it; tokens come grouped by adapter, so each adapter's A and B are read while they are in cache.
     */
    private void applyLora(int layer, int[] projections, float[] x, float[][] ys, int[] order, int[] slotOf) {
        if (order.length == 0) return;
        parallel.forRange(order.length, 1, (from, to) -> {
            float[] shrunk = new float[64];
            for (int j = from; j < to; j++) {
                int t = order[j];
                LoraWeights.Module[] modules = slots[slotOf[t]].modules()[layer];
                for (int p = 0; p < projections.length; p++) {
                    LoraWeights.Module m = modules[projections[p]];
                    if (m == null) continue;
                    if (shrunk.length < m.rank()) shrunk = new float[m.rank()];
                    for (int r = 0; r < m.rank(); r++) shrunk[r] = m.scale() * m.a().dotRow(r, x, t * m.in());
                    for (int r = 0; r < m.rank(); r++) m.bTransposed().addRowScaled(r, shrunk[r], ys[p], t * m.out());
                }
            }
        });
    }

    /**
     * Causal attention of every token over its sequence's cached keys and values, or over the last {@code window}
     * of them: Hugging Face's sliding window mask keeps key j for query i when j > i - window, and vLLM passes
     * FlashAttention window (window - 1, 0), so both cover {@code window} positions, the query's own included. Each
     * sequence's cache offsets (block table resolved once per step) are shared by its tokens and heads.
     */
    private void attention(
            int layer, List<ScheduledSequence> seqs, int[] seqOf, int[] pos, float[] q, float[] att, int n) {
        int heads = c.numHeads(), headDim = c.headDim(), group = heads / c.numKvHeads();
        float scale = (float) (1.0 / Math.sqrt(headDim));
        float[] keys = keyCache[layer], values = valueCache[layer];
        int window = windows[layer];
        int[][] offsets = cacheOffsets(seqs);
        parallel.forRange(n * heads, 4, (from, to) -> {
            float[] scores = new float[64];
            for (int job = from; job < to; job++) {
                int t = job / heads, hd = job % heads;
                int kvOff = (hd / group) * headDim;
                int qOff = t * qDim + hd * headDim;
                int first = Math.max(0, pos[t] + 1 - window);
                int len = pos[t] + 1 - first;
                int[] rows = offsets[seqOf[t]];
                if (scores.length < len) scores = new float[Math.max(len, scores.length * 2)];
                float max = Float.NEGATIVE_INFINITY;
                for (int j = 0; j < len; j++) {
                    float s = Kernels.dot(q, qOff, keys, rows[first + j] + kvOff, headDim) * scale;
                    scores[j] = s;
                    if (s > max) max = s;
                }
                float sum = Kernels.expShifted(scores, len, max);
                Kernels.weightedRowSum(
                        values, rows, first, kvOff, scores, 1f / sum, len, att, t * qDim + hd * headDim, headDim);
            }
        });
    }

    /** For each sequence, the cache offset (slot * kvDim) of each of its positions up to its last one this step. */
    private int[][] cacheOffsets(List<ScheduledSequence> seqs) {
        int[][] offsets = new int[seqs.size()][];
        for (int s = 0; s < offsets.length; s++) {
            ScheduledSequence seq = seqs.get(s);
            int len = seq.startPosition() + seq.tokens().length;
            int[] o = new int[len];
            for (int j = 0; j < len; j++) o[j] = cacheSlot(seq.blockTable(), j) * kvDim;
            offsets[s] = o;
        }
        return offsets;
    }

    private float[][] logits(List<ScheduledSequence> seqs, float[] x) {
        int h = c.hiddenSize(), vocab = c.vocabSize();
        int[] rows = new int[seqs.size()];
        int sampled = 0, t = 0;
        for (int s = 0; s < seqs.size(); s++) {
            t += seqs.get(s).tokens().length;
            if (seqs.get(s).sample()) rows[sampled++] = t - 1;
        }
        float[] xs = new float[sampled * h];
        for (int i = 0; i < sampled; i++) {
            Kernels.rmsNorm(x, rows[i] * h, w.finalNorm(), (float) c.rmsNormEps(), xs, i * h, h);
        }
        float[] all = lmHead(xs, sampled);
        float[][] out = new float[seqs.size()][];
        for (int s = 0, i = 0; s < seqs.size(); s++) {
            if (seqs.get(s).sample()) out[s] = Arrays.copyOfRange(all, i * vocab, (i++ + 1) * vocab);
        }
        return out;
    }

    /** The vocabulary's logits of {@code count} normed hidden states, row after row. */
    private float[] lmHead(float[] xs, int count) {
        int vocab = c.vocabSize();
        float[] all = new float[count * vocab];
        parallel.forRange(
                vocab / 4,
                64,
                (from, to) -> w.lmHead().matmulRows(xs, count, from * 4, to == vocab / 4 ? vocab : to * 4, all, vocab));
        return all;
    }

    /**
     * For the sequences that ask for prompt log probabilities, those of each prompt token that this step's tokens
     * predict (see {@link StepResult#promptLogprobs}); null when none asks. Only these requests pay for logits at
     * every position, a few rows at a time so a long prompt does not hold a whole vocabulary per token.
     */
    private TokenLogprobs[][] promptLogprobs(List<ScheduledSequence> seqs, float[] x) {
        if (seqs.stream().noneMatch(q -> q.params().promptLogprobs() != null)) return null;
        int h = c.hiddenSize(), vocab = c.vocabSize();
        TokenLogprobs[][] out = new TokenLogprobs[seqs.size()][];
        int first = 0;
        for (int s = 0; s < seqs.size(); s++) {
            ScheduledSequence seq = seqs.get(s);
            int start = first;
            first += seq.tokens().length;
            if (seq.params().promptLogprobs() == null) continue;
            int positions = StepResult.promptPositions(seq);
            out[s] = new TokenLogprobs[positions];
            for (int from = 0; from < positions; from += PROMPT_ROWS) {
                int rows = Math.min(PROMPT_ROWS, positions - from);
                float[] xs = new float[rows * h];
                for (int i = 0; i < rows; i++) {
                    Kernels.rmsNorm(x, (start + from + i) * h, w.finalNorm(), (float) c.rmsNormEps(), xs, i * h, h);
                }
                float[] logits = lmHead(xs, rows);
                for (int i = 0; i < rows; i++) {
                    int next = seq.prompt()[seq.startPosition() + from + i + 1];
                    out[s][from + i] = Logprobs.of(
                            logits, i * vocab, vocab, next, seq.params().promptLogprobs());
                }
            }
        }
        return out;
    }
}
