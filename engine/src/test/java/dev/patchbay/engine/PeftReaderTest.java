package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.AdapterException.Kind;
import dev.patchbay.engine.adapter.AdapterSpec;
import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.engine.format.SafetensorsWriter;
import dev.patchbay.engine.model.ModelConfig;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PeftReaderTest {
    private static final ModelConfig BASE = SimModel.DEFAULT_CONFIG;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Path adapter(String name) throws Exception {
        return EngineFixture.writeAdapter(dir, name, 3);
    }

    private void editConfig(Path adapter, Consumer<ObjectNode> edit) throws Exception {
        Path cfg = adapter.resolve(PeftReader.CONFIG_FILE);
        ObjectNode node = (ObjectNode) JSON.readTree(cfg.toFile());
        edit.accept(node);
        JSON.writeValue(cfg.toFile(), node);
    }

    private static AdapterException rejection(Path adapter, int maxRank) {
        try {
            PeftReader.read("x", adapter, BASE, maxRank);
        } catch (AdapterException e) {
            return e;
        }
        throw new AssertionError("adapter was accepted");
    }

    @Test
    void readsAValidAdapter() throws Exception {
        AdapterSpec spec = PeftReader.read("ok", adapter("ok"), BASE, 16);
        assertThat(spec.rank()).isEqualTo(8);
        assertThat(spec.scale()).isEqualTo(2.0);
        assertThat(spec.targetModules()).containsExactly("q_proj", "v_proj");
        assertThat(spec.modules()).hasSize(2 * BASE.numLayers());
        assertThat(spec.modules().get(1).out()).isEqualTo(BASE.numKvHeads() * BASE.headDim());
        assertThat(spec.weightBytes())
                .isEqualTo(Files.size(spec.tensors().file()) - spec.tensors().dataStart());
    }

    @Test
    void rsLoraScalesBySquareRootOfRank() throws Exception {
        Path a = adapter("rs");
        editConfig(a, c -> c.put("use_rslora", true));
        assertThat(PeftReader.read("rs", a, BASE, 16).scale()).isEqualTo(16 / Math.sqrt(8));
    }

    @Test
    void rankAboveMaxLoraRank() throws Exception {
        AdapterException e = rejection(adapter("big"), 1);
        assertThat(e.kind()).isEqualTo(Kind.INVALID);
        assertThat(e).hasMessage("LoRA rank 8 is greater than max_lora_rank 1.");
    }

    @Test
    void dora() throws Exception {
        Path a = adapter("dora");
        editConfig(a, c -> c.put("use_dora", true));
        assertThat(rejection(a, 16)).hasMessage("DoRA adapters (use_dora=true) are not supported.");
    }

    @Test
    void modulesToSave() throws Exception {
        Path a = adapter("mts");
        editConfig(a, c -> c.putArray("modules_to_save").add("lm_head"));
        assertThat(rejection(a, 16))
                .hasMessageContaining("Only modules_to_save=None is supported")
                .hasMessageContaining("lm_head");
    }

    @Test
    void biasOtherThanNone() throws Exception {
        Path a = adapter("bias");
        editConfig(a, c -> c.put("bias", "lora_only"));
        assertThat(rejection(a, 16)).hasMessage("Adapter bias is not supported (bias=\"lora_only\").");
    }

    @Test
    void targetModuleTheBaseModelLacks() throws Exception {
        Path a = adapter("tm");
        editConfig(a, c -> c.putArray("target_modules").add("q_proj").add("lm_head"));
        assertThat(rejection(a, 16))
                .hasMessageContaining("expected target modules in")
                .hasMessageContaining("[lm_head]");
    }

    @Test
    void tensorOfTheWrongShape() throws Exception {
        Path a = adapter("shape");
        new SafetensorsWriter()
                .addF32(
                        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight",
                        new long[] {8, 100},
                        new float[800])
                .addF32(
                        "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight",
                        new long[] {BASE.hiddenSize(), 8},
                        new float[BASE.hiddenSize() * 8])
                .write(a.resolve(PeftReader.WEIGHTS_FILE));
        assertThat(rejection(a, 16))
                .hasMessage("Tensor 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight'"
                        + " has shape [8, 100] but the base model needs [8, " + BASE.hiddenSize() + "]");
    }

    @Test
    void directoryWithoutTensors() throws Exception {
        Path a = adapter("empty");
        Files.delete(a.resolve(PeftReader.WEIGHTS_FILE));
        assertThat(rejection(a, 16)).hasMessageContaining("doesn't contain tensors");
        new SafetensorsWriter().write(a.resolve(PeftReader.WEIGHTS_FILE));
        assertThat(rejection(a, 16)).hasMessage(a + " doesn't contain tensors");
    }

    @Test
    void missingRequiredFields() throws Exception {
        Path a = adapter("fields");
        editConfig(a, c -> {
            c.remove("r");
            c.remove("lora_alpha");
        });
        assertThat(rejection(a, 16)).hasMessage("Missing required configuration fields: [lora_alpha, r]");
    }

    @Test
    void noAdapterAtThePathIsNotFound() {
        AdapterException e = rejection(dir.resolve("nothing-here"), 16);
        assertThat(e.kind()).isEqualTo(Kind.NOT_FOUND);
        assertThat(e).hasMessage("No adapter found for " + dir.resolve("nothing-here"));
    }

    @Test
    void truncatedTensorFile() throws Exception {
        Path a = adapter("trunc");
        Path st = a.resolve(PeftReader.WEIGHTS_FILE);
        byte[] all = Files.readAllBytes(st);
        Files.write(st, Arrays.copyOf(all, all.length - 100));
        assertThat(rejection(a, 16)).hasMessageContaining("lies outside the file's");
    }

    @Test
    void engineRefusesAnInvalidAdapterAndKeepsServing() throws Exception {
        EngineFixture f = new EngineFixture(
                EngineFixture.config().build(), LatencyModel.ZERO, SimulatedExecutor.TextMode.RANDOM, dir);
        Path a = adapter("bad");
        editConfig(a, c -> c.put("use_dora", true));
        assertThatThrownBy(() -> f.core.loadAdapter("bad", a, false, true)).isInstanceOf(AdapterException.class);
        assertThat(f.core.adapter("bad")).isNull();
        long id = f.submit(null, 4, 2);
        f.driver.runToCompletion();
        assertThat(f.finished(id)).isTrue();
    }
}
