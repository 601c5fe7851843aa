package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.format.SafetensorsWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MalformedModelTest {
    @TempDir
    Path dir;

    Path model;

    @BeforeEach
    void writeModel() throws IOException {
        model = dir.resolve("model");
        ModelGenerator.writeModel(model, ModelGenerator.Spec.tiny());
    }

    private void load() throws IOException {
        LlamaModel.load(model, 8, 4, 1, 1, null).close();
    }

    private void editConfig(String field, Object value) throws IOException {
        ObjectMapper om = new ObjectMapper();
        ObjectNode c = (ObjectNode) om.readTree(model.resolve("config.json").toFile());
        c.set(field, om.valueToTree(value));
        om.writeValue(model.resolve("config.json").toFile(), c);
    }

    @Test
    void missingDirectoryAndFiles() throws IOException {
        assertThatThrownBy(() -> LlamaModel.load(dir.resolve("nope"), 8, 4, 1, 1, null))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("nope")
                .hasMessageContaining("not a model directory");
        Files.delete(model.resolve("tokenizer.json"));
        assertThatThrownBy(this::load).hasMessageContaining("no tokenizer.json");
        Files.delete(model.resolve("config.json"));
        assertThatThrownBy(this::load).hasMessageContaining("no config.json");
    }

    @Test
    void invalidConfig() throws IOException {
        Files.writeString(model.resolve("config.json"), "{\"hidden_size\": 64,");
        assertThatThrownBy(this::load)
                .isInstanceOf(IOException.class)
                .hasMessageContaining("config.json")
                .hasMessageContaining("not valid JSON");
        ModelGenerator.writeModel(model, ModelGenerator.Spec.tiny());
        editConfig("architectures", new String[] {"GPT2LMHeadModel"});
        assertThatThrownBy(this::load)
                .hasMessageContaining("config.json")
                .hasMessageContaining("GPT2LMHeadModel is not supported");
        ModelGenerator.writeModel(model, ModelGenerator.Spec.tiny());
        editConfig("rope_scaling", Map.of("rope_type", "longrope", "factor", 4.0));
        assertThatThrownBy(this::load)
                .hasMessageContaining("config.json")
                .hasMessageContaining(
                        "rope_scaling type 'longrope' is not supported (supported: default, linear, llama3, dynamic, yarn)");
        editConfig("rope_scaling", Map.of("type", "dynamic"));
        assertThatThrownBy(this::load)
                .hasMessageContaining("config.json")
                .hasMessageContaining("'dynamic' needs a positive 'factor'");
        editConfig("rope_scaling", Map.of("type", "dynamic", "alpha", 2.0));
        assertThatThrownBy(this::load).hasMessageContaining("'dynamic' with 'alpha' is not supported");
        editConfig("rope_scaling", null);
        editConfig("architectures", new String[] {"MistralForCausalLM"});
        editConfig("sliding_window", 0);
        assertThatThrownBy(this::load)
                .hasMessageContaining("config.json")
                .hasMessageContaining("'sliding_window' must be a positive whole number, not 0");
    }

    @Test
    void truncatedTensorFile() throws IOException {
        Path file = model.resolve("model.safetensors");
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(bytes, bytes.length - 100));
        assertThatThrownBy(this::load)
                .isInstanceOf(IOException.class)
                .hasMessageContaining("model.safetensors")
                .hasMessageContaining("lies outside");
        Files.write(file, new byte[] {1, 2, 3});
        assertThatThrownBy(this::load).hasMessageContaining("model.safetensors").hasMessageContaining("too short");
    }

    @Test
    void shapeThatDisagreesWithTheConfig() throws IOException {
        editConfig("intermediate_size", 96);
        assertThatThrownBy(this::load)
                .isInstanceOf(IOException.class)
                .hasMessageContaining("model.safetensors")
                .hasMessageContaining("mlp.gate_proj.weight")
                .hasMessageContaining("has shape [128, 64] but the config needs [96, 64]");
    }

    @Test
    void missingTensorAndUnsupportedDtype() throws IOException {
        new SafetensorsWriter()
                .addF32("model.embed_tokens.weight", new long[] {400, 64}, new float[400 * 64])
                .write(model.resolve("model.safetensors"));
        assertThatThrownBy(this::load)
                .hasMessageContaining(model.toString())
                .hasMessageContaining("the weights lack tensor 'model.layers.0.input_layernorm.weight'");
        new SafetensorsWriter()
                .add("model.embed_tokens.weight", "I32", new long[] {400, 64}, new byte[400 * 64 * 4])
                .write(model.resolve("model.safetensors"));
        assertThatThrownBy(this::load)
                .hasMessageContaining("model.safetensors")
                .hasMessageContaining("dtype I32; only F32, F16 and BF16");
    }

    @Test
    void shardIndexNamingAMissingFile() throws IOException {
        Files.delete(model.resolve("model.safetensors"));
        Files.writeString(
                model.resolve("model.safetensors.index.json"),
                "{\"weight_map\": {\"model.embed_tokens.weight\": \"model-00001-of-00002.safetensors\"}}");
        assertThatThrownBy(this::load)
                .hasMessageContaining("model.safetensors.index.json")
                .hasMessageContaining("model-00001-of-00002.safetensors, which does not exist");
        Files.delete(model.resolve("model.safetensors.index.json"));
        assertThatThrownBy(this::load).hasMessageContaining("no model.safetensors nor model.safetensors.index.json");
    }

    @Test
    void tokenizerThatIsNotByteLevelBpe() throws IOException {
        Files.writeString(model.resolve("tokenizer.json"), "{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}");
        assertThatThrownBy(this::load)
                .hasMessageContaining("tokenizer.json")
                .hasMessageContaining("Unigram is not supported");
        Files.writeString(
                model.resolve("tokenizer.json"),
                "{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}}");
        assertThatThrownBy(this::load)
                .hasMessageContaining("tokenizer.json")
                .hasMessageContaining("BertPreTokenizer is not supported");
    }
}
