package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;

/**
 * Rotary position embedding in Hugging Face's "rotate half" layout (dimension i pairs with i + head_dim/2), with the
 * frequency scaling a config's {@code rope_scaling} asks for: none, {@code linear}, {@code llama3}, {@code dynamic}
 * (NTK, with vLLM's fixed base) or {@code yarn} (whose cos and sin also carry its attention factor, as in vLLM).
 */
final class Rope {
    static final String SUPPORTED = "default, linear, llama3, dynamic, yarn";

    private final double[] invFreq;
    private final double mscale;
    private final int half;

    Rope(double[] invFreq, double mscale) {
        this.invFreq = invFreq;
        this.mscale = mscale;
        this.half = invFreq.length;
    }

    static Rope of(ModelConfig c) throws IOException {
        JsonNode s = c.ropeScaling();
        if (s == null || s.isNull()) return new Rope(frequencies(c.ropeTheta(), c.headDim()), 1);
        String type = s.path("rope_type").asText(s.path("type").asText("default"));
        return switch (type) {
            case "default" -> new Rope(frequencies(c.ropeTheta(), c.headDim()), 1);
            case "linear" -> {
                double[] f = frequencies(c.ropeTheta(), c.headDim());
                double factor = s.path("factor").asDouble(1.0);
                for (int i = 0; i < f.length; i++) f[i] /= factor;
                yield new Rope(f, 1);
            }
            case "llama3" -> llama3(c, s);
            case "dynamic" -> dynamic(c, s);
            case "yarn" -> yarn(c, s);
            default ->
                throw new IOException(
                        "rope_scaling type '" + type + "' is not supported (supported: " + SUPPORTED + ")");
        };
    }

    /** The unscaled inverse frequencies base^(-2i/dim). */
    private static double[] frequencies(double base, int dim) {
        double[] f = new double[dim / 2];
        for (int i = 0; i < f.length; i++) f[i] = 1.0 / Math.pow(base, (2.0 * i) / dim);
        return f;
    }

    private static Rope llama3(ModelConfig c, JsonNode s) {
        double[] f = frequencies(c.ropeTheta(), c.headDim());
        double factor = s.path("factor").asDouble(1.0);
        double low = s.path("low_freq_factor").asDouble(1.0);
        double high = s.path("high_freq_factor").asDouble(4.0);
        double original = s.path("original_max_position_embeddings").asDouble(8192);
        double lowWavelen = original / low, highWavelen = original / high;
        for (int i = 0; i < f.length; i++) {
            double wavelen = 2 * Math.PI / f[i];
            if (wavelen > lowWavelen) {
                f[i] /= factor;
            } else if (wavelen >= highWavelen) {
                double smooth = (original / wavelen - low) / (high - low);
                f[i] = (1 - smooth) * f[i] / factor + smooth * f[i];
            }
        }
        return new Rope(f, 1);
    }

    /**
     * vLLM's DynamicNTKScalingRotaryEmbedding: one base for all positions, the one dynamic NTK reaches at the longest
     * scaled length (max positions x factor), so cached keys never need rotating again; Hugging Face instead
     * re-derives the base from the current length.
     */
    private static Rope dynamic(ModelConfig c, JsonNode s) throws IOException {
        if (s.has("alpha")) {
            throw new IOException("rope_scaling type 'dynamic' with 'alpha' is not supported, only with 'factor'");
        }
        double factor = factor(s, "dynamic");
        double maxPos = number(s, "original_max_position_embeddings", c.maxPositionEmbeddings());
        double maxLen = maxPos * factor;
        int dim = c.headDim();
        double base = c.ropeTheta() * Math.pow(factor * maxLen / maxPos - (factor - 1), dim / (dim - 2.0));
        return new Rope(frequencies(base, dim), 1);
    }

    /**
     * YaRN as Hugging Face's _compute_yarn_parameters and vLLM's YaRNScalingRotaryEmbedding compute it: dimensions
     * turning more than beta_fast times over the original context keep their frequency, those turning fewer than
     * beta_slow times are interpolated (divided by factor), with a linear ramp between.
     */
    private static Rope yarn(ModelConfig c, JsonNode s) throws IOException {
        double factor = factor(s, "yarn");
        double original = number(s, "original_max_position_embeddings", c.maxPositionEmbeddings());
        double betaFast = number(s, "beta_fast", 0), betaSlow = number(s, "beta_slow", 0);
        // Zero counts as unset, as in Hugging Face's `get("beta_fast") or 32`.
        if (betaFast == 0) betaFast = 32;
        if (betaSlow == 0) betaSlow = 1;
        int dim = c.headDim();
        double low = correctionDim(betaFast, dim, c.ropeTheta(), original);
        double high = correctionDim(betaSlow, dim, c.ropeTheta(), original);
        if (s.path("truncate").asBoolean(true)) {
            low = Math.floor(low);
            high = Math.ceil(high);
        }
        low = Math.max(low, 0);
        high = Math.min(high, dim - 1);
        if (low == high) high += 0.001;
        double[] f = frequencies(c.ropeTheta(), dim);
        for (int i = 0; i < f.length; i++) {
            double ramp = Math.clamp((i - low) / (high - low), 0.0, 1.0);
            f[i] = f[i] / factor * ramp + f[i] * (1 - ramp);
        }
        return new Rope(f, yarnAttentionFactor(s, factor));
    }

    /** The dimension whose frequency turns {@code rotations} times over {@code length} positions. */
    private static double correctionDim(double rotations, int dim, double base, double length) {
        return dim * Math.log(length / (rotations * 2 * Math.PI)) / (2 * Math.log(base));
    }

    private static double yarnAttentionFactor(JsonNode s, double factor) {
        if (s.hasNonNull("attention_factor")) return s.get("attention_factor").asDouble();
        double mscale = number(s, "mscale", 0), mscaleAllDim = number(s, "mscale_all_dim", 0);
        if (mscale != 0 && mscaleAllDim != 0) return yarnMscale(factor, mscale) / yarnMscale(factor, mscaleAllDim);
        return yarnMscale(factor, 1);
    }

    private static double yarnMscale(double factor, double mscale) {
        return factor <= 1 ? 1 : 0.1 * mscale * Math.log(factor) + 1;
    }

    private static double factor(JsonNode s, String type) throws IOException {
        double factor = number(s, "factor", 0);
        if (factor <= 0) throw new IOException("rope_scaling type '" + type + "' needs a positive 'factor'");
        return factor;
    }

    private static double number(JsonNode s, String field, double otherwise) {
        JsonNode v = s.get(field);
        return v != null && v.isNumber() ? v.asDouble() : otherwise;
    }

    /** mscale times the cos and sin of each frequency at {@code position}, into cs[off .. off + 2*half). */
    void table(int position, float[] cs, int off) {
        for (int i = 0; i < half; i++) {
            double angle = position * invFreq[i];
            cs[off + i] = (float) (Math.cos(angle) * mscale);
            cs[off + half + i] = (float) (Math.sin(angle) * mscale);
        }
    }

    /** Rotates one head vector in place with a table from {@link #table}. */
    void rotate(float[] v, int off, float[] cs, int csOff) {
        for (int i = 0; i < half; i++) {
            float c = cs[csOff + i], s = cs[csOff + half + i];
            float x0 = v[off + i], x1 = v[off + half + i];
            v[off + i] = x0 * c - x1 * s;
            v[off + half + i] = x0 * s + x1 * c;
        }
    }
}
