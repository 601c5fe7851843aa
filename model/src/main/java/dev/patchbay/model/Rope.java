package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;

/**
 * Rotary position embedding in Hugging Face's "rotate half" layout (dimension i pairs with i + head_dim/2), with the
 * frequency scaling a config's {@code rope_scaling} asks for: none, {@code linear} or {@code llama3}.
 */
final class Rope {
    private final double[] invFreq;
    private final int half;

    Rope(double[] invFreq) {
        this.invFreq = invFreq;
        this.half = invFreq.length;
    }

    static Rope of(ModelConfig c) throws IOException {
        int half = c.headDim() / 2;
        double[] f = new double[half];
        for (int i = 0; i < half; i++) f[i] = 1.0 / Math.pow(c.ropeTheta(), (2.0 * i) / c.headDim());
        JsonNode s = c.ropeScaling();
        if (s == null || s.isNull()) return new Rope(f);
        String type = s.path("rope_type").asText(s.path("type").asText("default"));
        double factor = s.path("factor").asDouble(1.0);
        switch (type) {
            case "default" -> { }
            case "linear" -> {
                for (int i = 0; i < half; i++) f[i] /= factor;
            }
            case "llama3" -> {
                double low = s.path("low_freq_factor").asDouble(1.0);
                double high = s.path("high_freq_factor").asDouble(4.0);
                double original = s.path("original_max_position_embeddings").asDouble(8192);
                double lowWavelen = original / low, highWavelen = original / high;
                for (int i = 0; i < half; i++) {
                    double wavelen = 2 * Math.PI / f[i];
                    if (wavelen > lowWavelen) {
                        f[i] /= factor;
                    } else if (wavelen >= highWavelen) {
                        double smooth = (original / wavelen - low) / (high - low);
                        f[i] = (1 - smooth) * f[i] / factor + smooth * f[i];
                    }
                }
            }
            default -> throw new IOException("rope_scaling type '" + type + "' is not supported (default, linear, llama3)");
        }
        return new Rope(f);
    }

    /** cos and sin of each frequency at {@code position}, into cs[off .. off + 2*half). */
    void table(int position, float[] cs, int off) {
        for (int i = 0; i < half; i++) {
            double angle = position * invFreq[i];
            cs[off + i] = (float) Math.cos(angle);
            cs[off + half + i] = (float) Math.sin(angle);
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
