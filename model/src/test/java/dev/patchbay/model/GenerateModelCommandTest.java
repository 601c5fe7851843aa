package dev.patchbay.model;

import static dev.patchbay.model.Steps.assertClose;
import static dev.patchbay.model.Steps.range;
import static dev.patchbay.model.Steps.seq;
import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.adapter.AdapterSpec;
import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.engine.format.Safetensors;
import dev.patchbay.engine.format.SafetensorsWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class GenerateModelCommandTest {
    @TempDir
    Path dir;

    @Test
    void writesAModelAndAdaptersTheEngineAccepts() throws Exception {
        int exit = new CommandLine(new GenerateModelCommand())
                .execute(
                        "--output",
                        dir.toString(),
                        "--hidden",
                        "96",
                        "--layers",
                        "3",
                        "--heads",
                        "6",
                        "--kv-heads",
                        "2",
                        "--intermediate",
                        "160",
                        "--vocab",
                        "512",
                        "--dtype",
                        "bf16",
                        "--architecture",
                        "Qwen2ForCausalLM",
                        "--tie-embeddings",
                        "--adapters",
                        "2",
                        "--rank",
                        "4",
                        "--target-modules",
                        "q_proj,o_proj,down_proj");
        assertThat(exit).isZero();
        try (LlamaModel model = LlamaModel.load(dir, 16, 8, 2, 2, null)) {
            assertThat(model.config().hiddenSize()).isEqualTo(96);
            assertThat(model.config().attentionBias()).isTrue();
            assertThat(model.config().tieWordEmbeddings()).isTrue();
            assertThat(model.dtype()).isEqualTo("bfloat16");
            for (int i = 0; i < 2; i++) {
                AdapterSpec spec = PeftReader.read("a" + i, dir.resolve("adapters/adapter-" + i), model.config(), 8);
                assertThat(spec.modules()).hasSize(9);
                assertThat(spec.modules().get(0).tensorA())
                        .isEqualTo("base_model.model.model.layers.0.mlp.down_proj.lora_A.weight");
                model.executor().activate(i, model.executor().loadAdapter(spec));
            }
            float[][] logits = model.executor()
                    .forward(List.of(
                            seq(1, range(1, 5), 0, new int[] {0}, 0, true),
                            seq(2, range(1, 5), 0, new int[] {1}, 1, true)));
            assertThat(logits[0]).hasSize(512);
            assertThat(Steps.relativeDifference(logits[0], logits[1])).isGreaterThan(1e-3);
        }
    }

    @Test
    void shardedWeightsLoadLikeOneFile() throws Exception {
        Path single = dir.resolve("single");
        ModelGenerator.writeModel(single, ModelGenerator.Spec.tiny());
        Path sharded = dir.resolve("sharded");
        Files.createDirectories(sharded);
        for (String f : List.of("config.json", "tokenizer.json", "tokenizer_config.json"))
            Files.copy(single.resolve(f), sharded.resolve(f));
        Map<String, float[]> all = TestModels.readF32(single.resolve("model.safetensors"));
        Safetensors shapes = Safetensors.readHeader(single.resolve("model.safetensors"));
        SafetensorsWriter a = new SafetensorsWriter(), b = new SafetensorsWriter();
        StringBuilder index = new StringBuilder("{\"metadata\": {}, \"weight_map\": {");
        int i = 0;
        for (var e : all.entrySet()) {
            boolean first =
                    e.getKey().startsWith("model.layers.0.") || e.getKey().startsWith("model.embed");
            (first ? a : b).addF32(e.getKey(), shapes.tensors().get(e.getKey()).shape(), e.getValue());
            index.append(i++ == 0 ? "" : ",")
                    .append('"')
                    .append(e.getKey())
                    .append("\": \"model-0000")
                    .append(first ? 1 : 2)
                    .append("-of-00002.safetensors\"");
        }
        a.write(sharded.resolve("model-00001-of-00002.safetensors"));
        b.write(sharded.resolve("model-00002-of-00002.safetensors"));
        Files.writeString(sharded.resolve("model.safetensors.index.json"), index.append("}}"));
        try (LlamaModel m1 = LlamaModel.load(single, 8, 4, 1, 1, null);
                LlamaModel m2 = LlamaModel.load(sharded, 8, 4, 1, 1, null)) {
            float[] l1 = m1.executor().forward(List.of(seq(1, range(3, 6), 0, new int[] {0, 1}, -1, true)))[0];
            float[] l2 = m2.executor().forward(List.of(seq(1, range(3, 6), 0, new int[] {0, 1}, -1, true)))[0];
            // Not bit-exact: a vector reduction may add its lanes in another order once the JIT has compiled it,
            // and the two forwards can run at different tiers. A wrong or missing tensor moves the logits far more.
            assertClose(l2, l1, 1e-5);
        }
    }
}
