package dev.patchbay.model;

import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Llama-family model's weights: projection and embedding matrices as {@link Matrix} (BF16 and F16 kept, F32 as F32),
 * norms and biases in F32.
 */
record LlamaWeights(Matrix embedTokens, Layer[] layers, float[] finalNorm, Matrix lmHead) {

    /** One decoder layer; biases are null when the architecture has none. */
    record Layer(
            float[] attnNorm,
            Matrix wq,
            float[] bq,
            Matrix wk,
            float[] bk,
            Matrix wv,
            float[] bv,
            Matrix wo,
            float[] ffnNorm,
            Matrix wGate,
            Matrix wUp,
            Matrix wDown) {}

    /** Heap the weights take; a tied head shares the embedding's. */
    long bytes() {
        return bytesByDtype().values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * Heap the weights take per format they are held in ("BF16", "F16", "F32"), largest first; norms and biases are
     * F32 whatever the file holds.
     */
    Map<String, Long> bytesByDtype() {
        Map<String, Long> b = new HashMap<>();
        add(b, embedTokens);
        if (lmHead != embedTokens) add(b, lmHead);
        long vectors = floats(finalNorm);
        for (Layer l : layers) {
            for (Matrix m : List.of(l.wq(), l.wk(), l.wv(), l.wo(), l.wGate(), l.wUp(), l.wDown())) add(b, m);
            vectors += floats(l.attnNorm()) + floats(l.ffnNorm()) + floats(l.bq()) + floats(l.bk()) + floats(l.bv());
        }
        b.merge("F32", vectors, Long::sum);
        Map<String, Long> sorted = new LinkedHashMap<>();
        b.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }

    /** The format most of the weights are held in: "BF16", "F16" or "F32". */
    String dtype() {
        return bytesByDtype().keySet().iterator().next();
    }

    /** One line for the start-up log, e.g. {@code Weights: 256.6 MiB in memory (BF16 256.5 MiB, F32 68.1 KiB)}. */
    String describe() {
        Map<String, Long> b = bytesByDtype();
        StringBuilder s = new StringBuilder("Weights: ")
                .append(KvCacheBudget.formatBytes(bytes()))
                .append(" in memory (");
        if (b.size() == 1) return s.append(dtype()).append(')').toString();
        String sep = "";
        for (var e : b.entrySet()) {
            s.append(sep).append(e.getKey()).append(' ').append(KvCacheBudget.formatBytes(e.getValue()));
            sep = ", ";
        }
        return s.append(')').toString();
    }

    private static void add(Map<String, Long> bytes, Matrix m) {
        bytes.merge(m.dtype(), m.bytes(), Long::sum);
    }

    private static long floats(float[] a) {
        return a == null ? 0 : (long) a.length * Float.BYTES;
    }

    static LlamaWeights load(Path dir, ModelConfig c, PrintStream progress) throws IOException {
        TensorFiles files = TensorFiles.open(dir);
        int h = c.hiddenSize(), q = c.numHeads() * c.headDim(), kv = c.numKvHeads() * c.headDim();
        int inter = c.intermediateSize(), vocab = c.vocabSize();
        int total = c.numLayers() + 2;
        Progress p = new Progress(progress, dir, files, total);

        Matrix embed = files.readMatrix("model.embed_tokens.weight", vocab, h);
        p.step();
        Layer[] layers = new Layer[c.numLayers()];
        for (int l = 0; l < layers.length; l++) {
            String pre = "model.layers." + l + ".";
            boolean bias = c.attentionBias();
            layers[l] = new Layer(
                    files.read(pre + "input_layernorm.weight", h),
                    files.readMatrix(pre + "self_attn.q_proj.weight", q, h),
                    bias ? files.read(pre + "self_attn.q_proj.bias", q) : null,
                    files.readMatrix(pre + "self_attn.k_proj.weight", kv, h),
                    bias ? files.read(pre + "self_attn.k_proj.bias", kv) : null,
                    files.readMatrix(pre + "self_attn.v_proj.weight", kv, h),
                    bias ? files.read(pre + "self_attn.v_proj.bias", kv) : null,
                    files.readMatrix(pre + "self_attn.o_proj.weight", h, q),
                    files.read(pre + "post_attention_layernorm.weight", h),
                    files.readMatrix(pre + "mlp.gate_proj.weight", inter, h),
                    files.readMatrix(pre + "mlp.up_proj.weight", inter, h),
                    files.readMatrix(pre + "mlp.down_proj.weight", h, inter));
            p.step();
        }
        float[] norm = files.read("model.norm.weight", h);
        // Tied models share the embedding matrix; some untied checkpoints still omit lm_head and mean the same.
        Matrix head = !c.tieWordEmbeddings() && files.has("lm_head.weight")
                ? files.readMatrix("lm_head.weight", vocab, h)
                : embed;
        p.step();
        return new LlamaWeights(embed, layers, norm, head);
    }

    /** Prints a line per tenth of the layers read, naming the file they came from. */
    private static final class Progress {
        private final PrintStream out;
        private final Path dir;
        private final int total;
        private int done;
        private int lastTenth = -1;

        Progress(PrintStream out, Path dir, TensorFiles files, int total) {
            this.out = out;
            this.dir = dir;
            this.total = total;
            if (out != null) out.println("Loading " + dir + ": " + files.files().size() + " safetensors file(s)");
        }

        void step() {
            done++;
            int tenth = done * 10 / total;
            if (out != null && tenth != lastTenth) {
                out.println("Loading " + dir.getFileName() + ": " + (tenth * 10) + "%");
                lastTenth = tenth;
            }
        }
    }
}
