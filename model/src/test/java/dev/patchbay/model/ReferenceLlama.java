package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.engine.format.Safetensors;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.DoubleUnaryOperator;

/**
 * A deliberately plain Llama forward pass for checking the executor: scalar loops, double accumulators, keys and
 * values recomputed for the whole sequence every call, LoRA applied unmerged as scale * B (A x), RoPE frequencies
 * and the sliding window mask written out from their definitions.
 */
final class ReferenceLlama {
    private final ModelConfig c;
    private final JsonNode config;
    private final double[] ropeFreq;
    private final double ropeScale;
    private final Map<String, float[]> t = new HashMap<>();
    private final Map<String, float[]> loraA = new HashMap<>();
    private final Map<String, float[]> loraB = new HashMap<>();
    private double loraScale;
    private int loraRank;

    ReferenceLlama(Path modelDir) throws IOException {
        c = ModelConfig.read(modelDir.resolve("config.json"));
        config = new ObjectMapper().readTree(modelDir.resolve("config.json").toFile());
        readAll(modelDir.resolve("model.safetensors"), t);
        ropeFreq = new double[c.headDim() / 2];
        for (int i = 0; i < ropeFreq.length; i++) ropeFreq[i] = ropeFrequency(i);
        ropeScale = ropeScale();
    }

    /** Adds a PEFT adapter, applied to every projection it has tensors for. */
    ReferenceLlama withAdapter(Path adapterDir) throws IOException {
        JsonNode cfg = new ObjectMapper()
                .readTree(adapterDir.resolve("adapter_config.json").toFile());
        loraRank = cfg.get("r").asInt();
        loraScale = cfg.get("lora_alpha").asDouble() / loraRank;
        Map<String, float[]> all = new HashMap<>();
        readAll(adapterDir.resolve("adapter_model.safetensors"), all);
        for (var e : all.entrySet()) {
            String name = e.getKey().replace("base_model.model.", "");
            if (name.contains(".lora_A.")) loraA.put(name.replace(".lora_A.weight", ".weight"), e.getValue());
            else loraB.put(name.replace(".lora_B.weight", ".weight"), e.getValue());
        }
        return this;
    }

    private static void readAll(Path file, Map<String, float[]> into) throws IOException {
        Safetensors st = Safetensors.readHeader(file);
        byte[] bytes = Files.readAllBytes(file);
        for (Safetensors.TensorInfo info : st.tensors().values()) {
            if (!info.dtype().equals("F32")) throw new IOException("reference reads F32 only");
            ByteBuffer b = ByteBuffer.wrap(bytes, (int) (st.dataStart() + info.begin()), (int) info.byteSize())
                    .order(ByteOrder.LITTLE_ENDIAN);
            float[] v = new float[(int) info.numElements()];
            for (int i = 0; i < v.length; i++) v[i] = b.getFloat();
            into.put(info.name(), v);
        }
    }

    /** Logits after each of {@code tokens}, processed from position 0. */
    float[][] logits(int[] tokens) {
        int n = tokens.length, h = c.hiddenSize(), hd = c.headDim();
        int nh = c.numHeads(), nkv = c.numKvHeads();
        float[][] x = new float[n][h];
        float[] emb = t.get("model.embed_tokens.weight");
        for (int i = 0; i < n; i++) for (int j = 0; j < h; j++) x[i][j] = emb[tokens[i] * h + j];
        for (int l = 0; l < c.numLayers(); l++) {
            String p = "model.layers." + l + ".";
            float[][] q = new float[n][], k = new float[n][], v = new float[n][];
            for (int i = 0; i < n; i++) {
                float[] xn = rmsNorm(x[i], t.get(p + "input_layernorm.weight"));
                q[i] = linear(p + "self_attn.q_proj", xn);
                k[i] = linear(p + "self_attn.k_proj", xn);
                v[i] = linear(p + "self_attn.v_proj", xn);
                for (int head = 0; head < nh; head++) rope(q[i], head * hd, i);
                for (int head = 0; head < nkv; head++) rope(k[i], head * hd, i);
            }
            int window = slidingWindow(l);
            for (int i = 0; i < n; i++) {
                float[] att = new float[nh * hd];
                for (int head = 0; head < nh; head++) {
                    int kvHead = head / (nh / nkv);
                    double[] s = new double[i + 1];
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j <= i; j++) {
                        double d = 0;
                        for (int e = 0; e < hd; e++) d += q[i][head * hd + e] * k[j][kvHead * hd + e];
                        // Hugging Face's sliding_window_overlay: key j is visible to query i when j > i - window.
                        s[j] = j > i - window ? d / Math.sqrt(hd) : Double.NEGATIVE_INFINITY;
                        max = Math.max(max, s[j]);
                    }
                    double sum = 0;
                    for (int j = 0; j <= i; j++) sum += s[j] = Math.exp(s[j] - max);
                    for (int e = 0; e < hd; e++) {
                        double o = 0;
                        for (int j = 0; j <= i; j++) o += s[j] / sum * v[j][kvHead * hd + e];
                        att[head * hd + e] = (float) o;
                    }
                }
                float[] o = linear(p + "self_attn.o_proj", att);
                for (int j = 0; j < h; j++) x[i][j] += o[j];
                float[] xn = rmsNorm(x[i], t.get(p + "post_attention_layernorm.weight"));
                float[] g = linear(p + "mlp.gate_proj", xn), u = linear(p + "mlp.up_proj", xn);
                for (int j = 0; j < g.length; j++) g[j] = (float) (g[j] / (1 + Math.exp(-g[j])) * u[j]);
                float[] d = linear(p + "mlp.down_proj", g);
                for (int j = 0; j < h; j++) x[i][j] += d[j];
            }
        }
        float[] head = t.containsKey("lm_head.weight") && !c.tieWordEmbeddings() ? t.get("lm_head.weight") : emb;
        float[][] out = new float[n][c.vocabSize()];
        for (int i = 0; i < n; i++) {
            float[] xn = rmsNorm(x[i], t.get("model.norm.weight"));
            for (int r = 0; r < c.vocabSize(); r++) {
                double d = 0;
                for (int j = 0; j < h; j++) d += (double) head[r * h + j] * xn[j];
                out[i][r] = (float) d;
            }
        }
        return out;
    }

    private float[] linear(String name, float[] x) {
        float[] w = t.get(name + ".weight");
        float[] bias = t.get(name + ".bias");
        int in = x.length, out = w.length / in;
        float[] y = new float[out];
        for (int o = 0; o < out; o++) {
            double d = bias == null ? 0 : bias[o];
            for (int i = 0; i < in; i++) d += (double) w[o * in + i] * x[i];
            y[o] = (float) d;
        }
        float[] a = loraA.get(name + ".weight"), b = loraB.get(name + ".weight");
        if (a != null) {
            double[] ax = new double[loraRank];
            for (int r = 0; r < loraRank; r++) for (int i = 0; i < in; i++) ax[r] += (double) a[r * in + i] * x[i];
            for (int o = 0; o < out; o++) {
                double d = 0;
                for (int r = 0; r < loraRank; r++) d += b[o * loraRank + r] * ax[r];
                y[o] += (float) (loraScale * d);
            }
        }
        return y;
    }

    private float[] rmsNorm(float[] x, float[] w) {
        double ss = 0;
        for (float f : x) ss += (double) f * f;
        double inv = 1 / Math.sqrt(ss / x.length + c.rmsNormEps());
        float[] out = new float[x.length];
        for (int i = 0; i < x.length; i++) out[i] = (float) (x[i] * inv * w[i]);
        return out;
    }

    /** The window of layer {@code l} as Hugging Face's Mistral and Qwen2 configs define it; MAX_VALUE for none. */
    private int slidingWindow(int l) {
        JsonNode w = config.get("sliding_window");
        if (w == null || w.isNull()) return Integer.MAX_VALUE;
        if (c.architecture().equals("MistralForCausalLM")) return w.asInt();
        if (c.architecture().equals("Qwen2ForCausalLM")
                && config.path("use_sliding_window").asBoolean()) {
            return l >= config.path("max_window_layers").asInt(28) ? w.asInt() : Integer.MAX_VALUE;
        }
        return Integer.MAX_VALUE;
    }

    /** Inverse frequency of rotary pair {@code i} under the config's rope_scaling. */
    private double ropeFrequency(int i) {
        int hd = c.headDim();
        double freq = Math.pow(c.ropeTheta(), -2.0 * i / hd);
        JsonNode s = c.ropeScaling();
        if (s == null) return freq;
        String type = s.path("rope_type").asText(s.path("type").asText());
        double factor = s.path("factor").asDouble();
        switch (type) {
            case "linear" -> freq /= factor;
            case "llama3" -> {
                double lowF = s.get("low_freq_factor").asDouble(),
                        highF = s.get("high_freq_factor").asDouble();
                double orig = s.get("original_max_position_embeddings").asDouble();
                double wavelen = 2 * Math.PI / freq;
                if (wavelen > orig / lowF) {
                    freq = freq / factor;
                } else if (wavelen >= orig / highF) {
                    double smooth = (orig / wavelen - lowF) / (highF - lowF);
                    freq = (1 - smooth) * freq / factor + smooth * freq;
                }
            }
            case "dynamic" -> {
                // vLLM's fixed base: the dynamic NTK base at length max_positions * factor, where
                // factor * length / max_positions - (factor - 1) = factor^2 - factor + 1.
                double base = c.ropeTheta() * Math.pow(factor * factor - factor + 1, hd / (hd - 2.0));
                freq = Math.pow(base, -2.0 * i / hd);
            }
            case "yarn" -> {
                double orig = s.path("original_max_position_embeddings").asDouble(c.maxPositionEmbeddings());
                double fast = s.path("beta_fast").asDouble(32),
                        slow = s.path("beta_slow").asDouble(1);
                // The pair index at which a frequency turns `r` times over the original context.
                DoubleUnaryOperator pairTurning =
                        r -> hd * Math.log(orig / (2 * Math.PI * r)) / (2 * Math.log(c.ropeTheta()));
                double low = pairTurning.applyAsDouble(fast), high = pairTurning.applyAsDouble(slow);
                if (s.path("truncate").asBoolean(true)) {
                    low = Math.floor(low);
                    high = Math.ceil(high);
                }
                low = Math.max(0, low);
                high = Math.min(hd - 1, high);
                if (high == low) high += 0.001;
                double interpolated = Math.min(1, Math.max(0, (i - low) / (high - low)));
                freq = interpolated * freq / factor + (1 - interpolated) * freq;
            }
            default -> {}
        }
        return freq;
    }

    /** YaRN's attention factor, multiplied into cos and sin; 1 for the other scalings. */
    private double ropeScale() {
        JsonNode s = c.ropeScaling();
        if (s == null || !s.path("rope_type").asText(s.path("type").asText()).equals("yarn")) return 1;
        if (s.has("attention_factor")) return s.get("attention_factor").asDouble();
        double factor = s.get("factor").asDouble();
        DoubleUnaryOperator mscale = m -> factor <= 1 ? 1 : 0.1 * m * Math.log(factor) + 1;
        if (s.has("mscale") && s.has("mscale_all_dim")) {
            return mscale.applyAsDouble(s.get("mscale").asDouble())
                    / mscale.applyAsDouble(s.get("mscale_all_dim").asDouble());
        }
        return mscale.applyAsDouble(1);
    }

    /** Rotate-half RoPE with the frequencies and scale above. */
    private void rope(float[] v, int off, int pos) {
        int half = c.headDim() / 2;
        for (int i = 0; i < half; i++) {
            double angle = pos * ropeFreq[i];
            double cos = Math.cos(angle) * ropeScale, sin = Math.sin(angle) * ropeScale;
            double x0 = v[off + i], x1 = v[off + i + half];
            v[off + i] = (float) (x0 * cos - x1 * sin);
            v[off + i + half] = (float) (x0 * sin + x1 * cos);
        }
    }
}
