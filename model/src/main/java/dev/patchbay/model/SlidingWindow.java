package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.util.Arrays;

/**
 * Which layers attend through a sliding window, read from config.json as Hugging Face reads it: every layer of a
 * Mistral model with a {@code sliding_window}; for Qwen2 only with {@code use_sliding_window}, and then the layers
 * {@code layer_types} marks "sliding_attention" or, without it, those from {@code max_window_layers} (default 28) on.
 * A null or absent {@code sliding_window} means none; Llama configs have none.
 */
final class SlidingWindow {
    /** The window of a layer with full causal attention. */
    static final int NONE = Integer.MAX_VALUE;

    private SlidingWindow() {}

    /** Each layer's window in positions, the query's own included; {@link #NONE} where attention is not windowed. */
    static int[] perLayer(JsonNode config, ModelConfig c) throws IOException {
        int[] windows = new int[c.numLayers()];
        Arrays.fill(windows, NONE);
        JsonNode size = config.get("sliding_window");
        boolean mistral = c.architecture().equals("MistralForCausalLM");
        boolean qwen2 = c.architecture().equals("Qwen2ForCausalLM")
                && config.path("use_sliding_window").asBoolean(false);
        if (size == null || size.isNull() || !(mistral || qwen2)) return windows;
        if (!size.isIntegralNumber() || !size.canConvertToInt() || size.asInt() <= 0) {
            throw new IOException("'sliding_window' must be a positive whole number, not " + size);
        }
        JsonNode types = config.path("layer_types");
        int firstWindowed = config.path("max_window_layers").asInt(28);
        for (int l = 0; l < windows.length; l++) {
            boolean windowed = mistral
                    || (types.isArray() ? types.path(l).asText().equals("sliding_attention") : l >= firstWindowed);
            if (windowed) windows[l] = size.asInt();
        }
        return windows;
    }
}
