package dev.patchbay.engine.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The shapes of a Llama-family transformer, read from a Hugging Face {@code config.json}. The engine
 * needs them to check adapters against the base model; the real executor needs them to run it.
 */
public record ModelConfig(
        String architecture,
        int hiddenSize,
        int numLayers,
        int numHeads,
        int numKvHeads,
        int headDim,
        int intermediateSize,
        int vocabSize,
        int maxPositionEmbeddings,
        double rmsNormEps,
        double ropeTheta,
        boolean tieWordEmbeddings,
        boolean attentionBias,
        String torchDtype,
        JsonNode ropeScaling) {

    /** The projections a LoRA adapter may target, mapped to their {input, output} sizes. */
    public Map<String, int[]> loraTargetShapes() {
        int q = numHeads * headDim;
        int kv = numKvHeads * headDim;
        Map<String, int[]> m = new LinkedHashMap<>();
        m.put("q_proj", new int[] {hiddenSize, q});
        m.put("k_proj", new int[] {hiddenSize, kv});
        m.put("v_proj", new int[] {hiddenSize, kv});
        m.put("o_proj", new int[] {q, hiddenSize});
        m.put("gate_proj", new int[] {hiddenSize, intermediateSize});
        m.put("up_proj", new int[] {hiddenSize, intermediateSize});
        m.put("down_proj", new int[] {intermediateSize, hiddenSize});
        return m;
    }

    public static ModelConfig read(Path configJson) throws IOException {
        return fromJson(readTree(configJson), configJson.toString());
    }

    /**
     * A JSON file of the model directory parsed: config.json, for readers of fields beyond these (the real executor's
     * sliding window), or another such file; an IOException names the file and the parser's complaint.
     */
    public static JsonNode readTree(Path configJson) throws IOException {
        try {
            return new ObjectMapper().readTree(configJson.toFile());
        } catch (IOException e) {
            throw new IOException(configJson + ": not valid JSON: " + jsonProblem(e), e);
        }
    }

    /** A JSON parser's complaint without the source excerpt it appends on further lines. */
    public static String jsonProblem(IOException e) {
        return e instanceof JsonProcessingException j
                ? j.getOriginalMessage()
                        + (j.getLocation() == null
                                ? ""
                                : " (line " + j.getLocation().getLineNr() + ", column "
                                        + j.getLocation().getColumnNr() + ")")
                : String.valueOf(e.getMessage());
    }

    public static ModelConfig fromJson(JsonNode n, String source) throws IOException {
        String arch =
                n.path("architectures").path(0).asText(n.path("model_type").asText("LlamaForCausalLM"));
        int hidden = required(n, "hidden_size", source);
        int heads = required(n, "num_attention_heads", source);
        int layers = required(n, "num_hidden_layers", source);
        int kvHeads = n.path("num_key_value_heads").asInt(heads);
        int headDim = n.hasNonNull("head_dim") ? n.get("head_dim").asInt() : hidden / heads;
        boolean qwen = arch.toLowerCase().contains("qwen2");
        return new ModelConfig(
                arch,
                hidden,
                layers,
                heads,
                kvHeads,
                headDim,
                required(n, "intermediate_size", source),
                required(n, "vocab_size", source),
                n.path("max_position_embeddings").asInt(4096),
                n.path("rms_norm_eps").asDouble(1e-5),
                n.path("rope_theta").asDouble(10000.0),
                n.path("tie_word_embeddings").asBoolean(false),
                n.path("attention_bias").asBoolean(qwen),
                n.path("torch_dtype").asText("float32"),
                n.hasNonNull("rope_scaling") ? n.get("rope_scaling") : null);
    }

    private static int required(JsonNode n, String field, String source) throws IOException {
        JsonNode v = n.get(field);
        if (v == null || !v.canConvertToInt() || v.asInt() <= 0) {
            throw new IOException(source + ": missing or invalid '" + field + "'");
        }
        return v.asInt();
    }
}
