package dev.patchbay.model;

import static dev.patchbay.model.Steps.assertClose;
import static dev.patchbay.model.Steps.range;
import static dev.patchbay.model.Steps.seq;
import static dev.patchbay.model.Steps.slice;
import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.engine.exec.LoadedAdapter;
import dev.patchbay.engine.exec.ScheduledSequence;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ForwardPassTest {
    static final int BLOCK = 4;
    static final List<String> ALL =
            List.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj");
    /** The sequence the reference checks run: an 11-token prompt, then 3 decodes. */
    static final int[] TOKENS = {5, 17, 300, 2, 99, 42, 42, 7, 260, 1, 33, 8, 150, 77};

    @TempDir
    Path dir;

    private LlamaModel load(Path modelDir) throws Exception {
        return LlamaModel.load(modelDir, 64, BLOCK, 4, 2, null);
    }

    private void checkAgainstReference(ModelGenerator.Spec spec, Path adapter) throws Exception {
        Path modelDir = dir.resolve("model");
        ModelGenerator.writeModel(modelDir, spec);
        checkAgainstReference(modelDir, spec, adapter);
    }

    /**
     * Prefill of a prompt, then decode steps, each checked against the reference at that position; returns the
     * executor's logits after the last token.
     */
    private float[] checkAgainstReference(Path modelDir, ModelGenerator.Spec spec, Path adapter) throws Exception {
        ReferenceLlama ref = new ReferenceLlama(modelDir);
        int slot = -1;
        try (LlamaModel model = load(modelDir)) {
            if (adapter != null) {
                ModelGenerator.writeAdapter(adapter, spec, 4, 8, ALL, 99);
                ref.withAdapter(adapter);
                LoadedAdapter la = model.executor().loadAdapter(PeftReader.read("a", adapter, model.config(), 16));
                model.executor().activate(2, la);
                slot = 2;
            }
            int[] prompt = slice(TOKENS, 0, 11);
            int[] all = TOKENS;
            float[][] expected = ref.logits(all);
            int[] blocks = {9, 3, 12, 0};
            float[] got = model.executor().forward(List.of(seq(1, prompt, 0, blocks, slot, true)))[0];
            assertClose(got, expected[prompt.length - 1], 1e-4);
            for (int p = prompt.length; p < all.length; p++) {
                got = model.executor().forward(List.of(seq(1, new int[] {all[p]}, p, blocks, slot, true)))[0];
                assertClose(got, expected[p], 1e-4);
            }
            return got;
        }
    }

    /** The plain implementation's logits after the last of {@link #TOKENS}, to show that a setting matters. */
    private float[] referenceLogits(ModelGenerator.Spec spec) throws Exception {
        Path modelDir = dir.resolve("reference");
        ModelGenerator.writeModel(modelDir, spec);
        float[][] logits = new ReferenceLlama(modelDir).logits(TOKENS);
        return logits[logits.length - 1];
    }

    @Test
    void llamaMatchesThePlainImplementation() throws Exception {
        checkAgainstReference(ModelGenerator.Spec.tiny(), null);
    }

    @Test
    void qwen2WithBiasTiedEmbeddingsAndLlama3RopeMatchesThePlainImplementation() throws Exception {
        checkAgainstReference(
                ModelGenerator.Spec.tiny()
                        .withArchitecture("Qwen2ForCausalLM")
                        .withTiedEmbeddings(true)
                        .withRopeScaling("{\"rope_type\":\"llama3\",\"factor\":8.0,\"low_freq_factor\":1.0,"
                                + "\"high_freq_factor\":4.0,\"original_max_position_embeddings\":16}"),
                null);
    }

    @Test
    void linearRopeScalingMatchesThePlainImplementation() throws Exception {
        checkAgainstReference(
                ModelGenerator.Spec.tiny()
                        .withArchitecture("MistralForCausalLM")
                        .withRopeScaling("{\"type\":\"linear\",\"factor\":4.0}"),
                null);
    }

    @Test
    void yarnRopeScalingMatchesThePlainImplementation() throws Exception {
        // Head size 16 over 2048 original positions ramps from pair 2 to pair 6: kept, blended and interpolated pairs.
        ModelGenerator.Spec spec = ModelGenerator.Spec.tiny()
                .withRopeScaling("{\"rope_type\":\"yarn\",\"factor\":4.0,\"original_max_position_embeddings\":2048}");
        checkAgainstReference(spec, null);
        assertThat(Steps.relativeDifference(referenceLogits(spec), referenceLogits(ModelGenerator.Spec.tiny())))
                .isGreaterThan(1e-3);
    }

    @Test
    void yarnWithBetasMscalesAndAttentionFactorMatchesThePlainImplementation() throws Exception {
        for (String json : List.of(
                "{\"type\":\"yarn\",\"factor\":8.0,\"beta_fast\":16,\"beta_slow\":2,\"mscale\":0.707,"
                        + "\"mscale_all_dim\":1.0,\"original_max_position_embeddings\":256,\"truncate\":false}",
                "{\"rope_type\":\"yarn\",\"factor\":2.0,\"attention_factor\":0.8}")) {
            checkAgainstReference(
                    ModelGenerator.Spec.tiny()
                            .withArchitecture("Qwen2ForCausalLM")
                            .withRopeScaling(json),
                    null);
        }
    }

    @Test
    void dynamicNtkRopeScalingMatchesThePlainImplementation() throws Exception {
        ModelGenerator.Spec spec = ModelGenerator.Spec.tiny()
                .withArchitecture("MistralForCausalLM")
                .withRopeScaling("{\"type\":\"dynamic\",\"factor\":4.0}");
        checkAgainstReference(spec, null);
        assertThat(Steps.relativeDifference(referenceLogits(spec), referenceLogits(spec.withRopeScaling(null))))
                .isGreaterThan(1e-3);
    }

    @Test
    void mistralSlidingWindowMatchesThePlainImplementationAndNarrowsAttention() throws Exception {
        ModelGenerator.Spec spec = ModelGenerator.Spec.tiny().withArchitecture("MistralForCausalLM");
        Path modelDir = dir.resolve("model");
        ModelGenerator.writeModel(modelDir, spec);
        // Five of 14 positions: the prompt's later tokens and every decode lose their earliest keys.
        TestModels.editConfig(modelDir, "sliding_window", 5);
        float[] windowed = checkAgainstReference(modelDir, spec, null);
        TestModels.editConfig(modelDir, "sliding_window", null);
        float[] full = checkAgainstReference(modelDir, spec, null);
        assertThat(Steps.relativeDifference(windowed, full)).isGreaterThan(1e-3);
    }

    @Test
    void qwen2SlidingWindowNeedsUseSlidingWindowAndStartsAtMaxWindowLayers() throws Exception {
        ModelGenerator.Spec spec = ModelGenerator.Spec.tiny().withArchitecture("Qwen2ForCausalLM");
        Path modelDir = dir.resolve("model");
        ModelGenerator.writeModel(modelDir, spec);
        TestModels.editConfig(modelDir, "sliding_window", 3);
        float[] disabled = checkAgainstReference(modelDir, spec, null);
        TestModels.editConfig(modelDir, "use_sliding_window", true);
        TestModels.editConfig(modelDir, "max_window_layers", 1);
        float[] upperLayer = checkAgainstReference(modelDir, spec, null);
        TestModels.editConfig(modelDir, "max_window_layers", 0);
        float[] bothLayers = checkAgainstReference(modelDir, spec, null);
        assertThat(Steps.relativeDifference(upperLayer, disabled)).isGreaterThan(1e-3);
        assertThat(Steps.relativeDifference(bothLayers, upperLayer)).isGreaterThan(1e-3);
    }

    @Test
    void sizesThatDoNotFillWholeVectorsMatchThePlainImplementation() throws Exception {
        // hidden 40 and head size 8 leave vector tails everywhere; BF16 rows that do not pack are widened.
        checkAgainstReference(
                new ModelGenerator.Spec("LlamaForCausalLM", 40, 2, 5, 1, 72, 400, "F32", 3, false, null), null);
    }

    @Test
    void loraOnEveryProjectionMatchesThePlainImplementation() throws Exception {
        checkAgainstReference(ModelGenerator.Spec.tiny(), dir.resolve("adapter"));
    }

    @Test
    void pagedBlocksAndChunkedPrefillEqualContiguousCache() throws Exception {
        Path modelDir = dir.resolve("model");
        ModelGenerator.writeModel(modelDir, ModelGenerator.Spec.tiny());
        int[] prompt = range(20, 14);
        try (LlamaModel model = load(modelDir)) {
            float[] contiguous =
                    model.executor().forward(List.of(seq(1, prompt, 0, new int[] {0, 1, 2, 3}, -1, true)))[0];
            int[] scattered = {40, 7, 63, 22};
            model.executor().forward(List.of(seq(2, slice(prompt, 0, 6), 0, scattered, -1, false)));
            float[] chunked =
                    model.executor().forward(List.of(seq(2, slice(prompt, 6, 14), 6, scattered, -1, true)))[0];
            assertClose(chunked, contiguous, 1e-6);
        }
    }

    @Test
    void mixedBatchWithDifferentAdaptersEqualsOneByOne() throws Exception {
        ModelGenerator.Spec spec = ModelGenerator.Spec.tiny();
        Path modelDir = dir.resolve("model");
        ModelGenerator.writeModel(modelDir, spec);
        ModelGenerator.writeAdapter(dir.resolve("a0"), spec, 8, 16, ALL, 1);
        ModelGenerator.writeAdapter(dir.resolve("a1"), spec, 4, 8, List.of("q_proj", "v_proj"), 2);
        try (LlamaModel model = load(modelDir)) {
            var ex = model.executor();
            ex.activate(0, ex.loadAdapter(PeftReader.read("a0", dir.resolve("a0"), model.config(), 16)));
            ex.activate(3, ex.loadAdapter(PeftReader.read("a1", dir.resolve("a1"), model.config(), 16)));
            // Contexts first: sequences 2 and 3 have earlier tokens in their caches, so this step decodes them.
            int[][] blocks = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}};
            ex.forward(List.of(
                    seq(2, range(30, 6), 0, blocks[1], 3, false), seq(3, range(50, 5), 0, blocks[2], -1, false)));
            List<ScheduledSequence> batch = List.of(
                    seq(1, range(100, 7), 0, blocks[0], 0, true),
                    seq(2, new int[] {77}, 6, blocks[1], 3, true),
                    seq(3, new int[] {12}, 5, blocks[2], -1, true),
                    seq(4, range(200, 5), 0, blocks[3], 0, true));
            float[][] together = ex.forward(batch);

            // The same sequences alone, on fresh blocks holding the same contexts.
            int[][] alone = {{12, 13, 14}, {15, 16, 17}, {18, 19, 20}, {21, 22, 23}};
            ex.forward(List.of(seq(2, range(30, 6), 0, alone[1], 3, false)));
            ex.forward(List.of(seq(3, range(50, 5), 0, alone[2], -1, false)));
            for (int s = 0; s < batch.size(); s++) {
                ScheduledSequence b = batch.get(s);
                float[] one = ex.forward(List.of(
                        seq(b.requestId(), b.tokens(), b.startPosition(), alone[s], b.adapterSlot(), true)))[0];
                assertClose(together[s], one, 1e-5);
            }
            // The adapters matter: the same prompt on the base model differs.
            float[] base = ex.forward(List.of(seq(9, range(100, 7), 0, new int[] {30, 31, 32}, -1, true)))[0];
            assertThat(Steps.relativeDifference(together[0], base)).isGreaterThan(1e-3);
        }
    }

    @Test
    void unmergedLoraEqualsMergedWeights() throws Exception {
        ModelGenerator.Spec spec = ModelGenerator.Spec.tiny();
        Path modelDir = dir.resolve("model");
        ModelGenerator.writeModel(modelDir, spec);
        Path adapter = dir.resolve("adapter");
        ModelGenerator.writeAdapter(adapter, spec, 8, 32, ALL, 5);
        Path merged = dir.resolve("merged");
        TestModels.mergeAdapter(modelDir, adapter, merged);
        int[] prompt = range(3, 9);
        try (LlamaModel model = load(modelDir);
                LlamaModel mergedModel = load(merged)) {
            var ex = model.executor();
            ex.activate(1, ex.loadAdapter(PeftReader.read("a", adapter, model.config(), 16)));
            float[] unmerged = ex.forward(List.of(seq(1, prompt, 0, new int[] {0, 1, 2}, 1, true)))[0];
            float[] withMerged =
                    mergedModel.executor().forward(List.of(seq(1, prompt, 0, new int[] {0, 1, 2}, -1, true)))[0];
            assertClose(unmerged, withMerged, 1e-4);
            float[] base = ex.forward(List.of(seq(2, prompt, 0, new int[] {3, 4, 5}, -1, true)))[0];
            assertThat(Steps.relativeDifference(base, withMerged)).isGreaterThan(1e-3);
        }
    }

    @Test
    void halfPrecisionFilesHeldAs16BitEqualF32AfterConversion() throws Exception {
        int[] prompt = range(10, 8);
        for (String dtype : List.of("BF16", "F16")) {
            ModelGenerator.Spec spec = ModelGenerator.Spec.tiny().withDtype(dtype);
            Path half = dir.resolve(dtype);
            ModelGenerator.writeModel(half, spec);
            ModelGenerator.writeAdapter(half.resolve("adapter"), spec, 4, 8, ALL, 3);
            Path f32 = dir.resolve(dtype + "-as-f32");
            TestModels.convertToF32(half, f32);
            TestModels.convertAdapterToF32(half.resolve("adapter"), f32.resolve("adapter"));
            try (LlamaModel a = load(half);
                    LlamaModel b = load(f32)) {
                assertThat(a.dtype()).isEqualTo(dtype.equals("BF16") ? "bfloat16" : "float16");
                assertThat(b.dtype()).isEqualTo("float32");
                a.executor()
                        .activate(
                                0,
                                a.executor()
                                        .loadAdapter(PeftReader.read("a", half.resolve("adapter"), a.config(), 16)));
                b.executor()
                        .activate(
                                0,
                                b.executor().loadAdapter(PeftReader.read("a", f32.resolve("adapter"), b.config(), 16)));
                for (int slot : new int[] {-1, 0}) {
                    // A prompt (several tokens a step) then a decode (one), on fresh blocks for each slot.
                    int[] blocks = slot < 0 ? new int[] {0, 1, 2} : new int[] {3, 4, 5};
                    float[] la = a.executor().forward(List.of(seq(1, prompt, 0, blocks, slot, true)))[0];
                    float[] lb = b.executor().forward(List.of(seq(1, prompt, 0, blocks, slot, true)))[0];
                    // Not bit-exact: lane reductions differ between interpreted and compiled vector code.
                    assertClose(la, lb, 1e-6);
                    la = a.executor().forward(List.of(seq(1, new int[] {123}, prompt.length, blocks, slot, true)))[0];
                    lb = b.executor().forward(List.of(seq(1, new int[] {123}, prompt.length, blocks, slot, true)))[0];
                    assertClose(la, lb, 1e-6);
                }
            }
        }
    }

    @Test
    void halfPrecisionWeightsTakeHalfTheMemoryOfF32AndTheLogSaysSo() throws Exception {
        Path f16 = dir.resolve("f16");
        ModelGenerator.writeModel(f16, ModelGenerator.Spec.tiny().withDtype("F16"));
        Path f32 = dir.resolve("f32");
        TestModels.convertToF32(f16, f32);
        var log = new ByteArrayOutputStream();
        try (var out = new PrintStream(log, true, StandardCharsets.UTF_8);
                LlamaModel half = LlamaModel.load(f16, 64, BLOCK, 4, 2, out);
                LlamaModel full = LlamaModel.load(f32, 64, BLOCK, 4, 2, out)) {
            long halfBytes = half.weightBytesByDtype().values().stream()
                    .mapToLong(Long::longValue)
                    .sum();
            long fullBytes = full.weightBytesByDtype().values().stream()
                    .mapToLong(Long::longValue)
                    .sum();
            // Norms stay F32: a little over half.
            assertThat((double) halfBytes / fullBytes).isBetween(0.5, 0.51);
            assertThat(half.weightBytesByDtype().keySet()).containsExactly("F16", "F32");
            assertThat(full.weightBytesByDtype().keySet()).containsExactly("F32");
            String text = log.toString(StandardCharsets.UTF_8);
            assertThat(text)
                    .contains("Weights: " + KvCacheBudget.formatBytes(halfBytes) + " in memory (F16 "
                            + KvCacheBudget.formatBytes(
                                    half.weightBytesByDtype().get("F16")) + ", F32 ");
            assertThat(text).contains("Weights: " + KvCacheBudget.formatBytes(fullBytes) + " in memory (F32)");
        }
    }
}
