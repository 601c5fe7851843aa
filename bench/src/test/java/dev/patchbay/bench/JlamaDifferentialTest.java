package dev.patchbay.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import dev.patchbay.bench.GreedyRuns.Request;
import dev.patchbay.bench.GreedyRuns.Trace;
import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.model.LlamaExecutor;
import dev.patchbay.model.LlamaModel;
import dev.patchbay.model.ModelGenerator;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Patchbay's forward pass against Jlama 0.8.4's, an implementation written independently, on the same generated F32
 * models: from token ids (no tokenizer involved), greedy tokens must be the same for {@link #STEPS} steps and every
 * step's logits within {@link #TOLERANCE}. Both compute in F32, so what is left is summation order and RoPE angles
 * (Jlama's are computed in float).
 */
class JlamaDifferentialTest {
    /** max |Patchbay logit - Jlama logit| over the vocabulary, divided by max |Jlama logit|, at every step. */
    static final double TOLERANCE = 1e-5;
    static final int STEPS = 8;
    static final List<String> ALL_PROJECTIONS =
            List.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj");
    /** One token, a short prompt, and one longer than {@link #WINDOW}. */
    static final List<int[]> PROMPTS = List.of(
            new int[] {7},
            new int[] {300, 12, 45, 45, 260, 1, 99},
            new int[] {5, 17, 300, 2, 99, 42, 42, 7, 260, 1, 33, 8, 150, 77, 410, 3, 64, 64, 200, 11});
    static final int WINDOW = 6;

    static final ModelGenerator.Spec LLAMA = new ModelGenerator.Spec("LlamaForCausalLM", 128, 2, 4, 2, 256, 512, "F32",
            11, false, null);

    @TempDir
    Path dir;

    static Stream<Arguments> shapes() {
        return Stream.of(
                Arguments.of("Llama, 4 heads on 2 KV heads", LLAMA),
                Arguments.of("Llama, 4 heads and 4 KV heads", new ModelGenerator.Spec("LlamaForCausalLM", 128, 2, 4, 4,
                        256, 512, "F32", 12, false, null)),
                Arguments.of("Qwen2, q/k/v bias, tied embeddings",
                        LLAMA.withArchitecture("Qwen2ForCausalLM").withTiedEmbeddings(true).withSeed(13)),
                Arguments.of("Mistral, no sliding window", LLAMA.withArchitecture("MistralForCausalLM").withSeed(14)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    void greedyTokensAndLogitsMatchJlama(String shape, ModelGenerator.Spec spec) throws Exception {
        Path model = dir.resolve("model");
        ModelGenerator.writeModel(model, spec);
        List<Trace> reference = jlama(model, PROMPTS);
        List<Trace> patchbay = patchbay(model, PROMPTS.stream().map(Request::base).toList(), null);
        double worst = 0;
        for (int p = 0; p < PROMPTS.size(); p++) worst = Math.max(worst, assertMatches(shape + ", prompt " + p, patchbay.get(p), reference.get(p)));
        report(shape, worst);
    }

    /**
     * Jlama's Mistral reads no {@code sliding_window}: on a prompt longer than the window its logits are those of full
     * attention, Patchbay's windowed ones are not, and Patchbay with the window removed matches Jlama.
     */
    @Test
    void mistralSlidingWindowIsIgnoredByJlama() throws Exception {
        Path windowed = dir.resolve("windowed");
        ModelGenerator.writeModel(windowed, LLAMA.withArchitecture("MistralForCausalLM").withSeed(14));
        ModelFiles.editConfig(windowed, "sliding_window", WINDOW);
        Path full = dir.resolve("full");
        ModelFiles.copyWithWeights(windowed, full, w -> {});
        ModelFiles.editConfig(full, "sliding_window", null);

        List<Trace> jlama = jlama(windowed, PROMPTS);
        List<Trace> patchbayWindowed = patchbay(windowed, PROMPTS.stream().map(Request::base).toList(), null);
        List<Trace> patchbayFull = patchbay(full, PROMPTS.stream().map(Request::base).toList(), null);
        int longest = PROMPTS.size() - 1;
        assertThat(relativeDifference(patchbayWindowed.get(longest).logits()[0], jlama.get(longest).logits()[0]))
                .as("the window changes the longest prompt's logits").isGreaterThan(1000 * TOLERANCE);
        double worst = 0;
        for (int p = 0; p < PROMPTS.size(); p++) worst = Math.max(worst, assertMatches("Mistral, window removed, prompt " + p, patchbayFull.get(p), jlama.get(p)));
        report("Mistral with sliding_window " + WINDOW + ": Patchbay without it", worst);
    }

    /**
     * The window itself against Jlama: on a one-layer Mistral each position's keys and values come from its own token,
     * so Jlama run on the last {@link #WINDOW} tokens alone computes what the windowed attention should.
     */
    @Test
    void mistralSlidingWindowMatchesJlamaRunOnTheWindowAlone() throws Exception {
        Path model = dir.resolve("model");
        ModelGenerator.writeModel(model, new ModelGenerator.Spec("MistralForCausalLM", 128, 1, 4, 2, 256, 512, "F32", 15,
                false, null));
        ModelFiles.editConfig(model, "sliding_window", WINDOW);
        List<Trace> patchbay = patchbay(model, PROMPTS.stream().map(Request::base).toList(), null);
        double worst = 0;
        AbstractModel jlama = loadJlama(model);
        try {
            for (int p = 0; p < PROMPTS.size(); p++) {
                Trace reference = GreedyRuns.jlamaWindowed(jlama, PROMPTS.get(p), STEPS, WINDOW);
                worst = Math.max(worst, assertMatches("one-layer Mistral, window " + WINDOW + ", prompt " + p, patchbay.get(p), reference));
            }
        } finally {
            jlama.close();
        }
        report("Mistral, one layer, sliding_window " + WINDOW, worst);
    }

    static Stream<Arguments> adapterShapes() {
        return Stream.of(Arguments.of("Llama", LLAMA),
                Arguments.of("Qwen2", LLAMA.withArchitecture("Qwen2ForCausalLM").withSeed(13)));
    }

    /**
     * A rank-8 adapter on all seven projections: Jlama on the merged weights is the reference; Patchbay must give it
     * from the merged weights without an adapter, from the base with the adapter per request, and in one batch with
     * a request on the base model, which must give Jlama's base output.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("adapterShapes")
    void mergedAdapterMatchesPerRequestLora(String shape, ModelGenerator.Spec spec) throws Exception {
        Path base = dir.resolve("base");
        Path adapter = dir.resolve("adapter");
        Path merged = dir.resolve("merged");
        ModelGenerator.writeModel(base, spec);
        ModelGenerator.writeAdapter(adapter, spec, 8, 16, ALL_PROJECTIONS, 21);
        ModelFiles.mergeAdapter(base, adapter, merged);
        int[] withAdapter = PROMPTS.get(2), withoutAdapter = PROMPTS.get(1);
        List<Trace> jlamaMerged = jlama(merged, List.of(withAdapter));
        List<Trace> jlamaBase = jlama(base, List.of(withoutAdapter, withAdapter));
        assertThat(relativeDifference(jlamaMerged.get(0).logits()[0], jlamaBase.get(1).logits()[0]))
                .as("the adapter changes the logits").isGreaterThan(1000 * TOLERANCE);

        double worst = assertMatches(shape + ", merged weights, no adapter",
                patchbay(merged, List.of(Request.base(withAdapter)), null).get(0), jlamaMerged.get(0));
        worst = Math.max(worst, assertMatches(shape + ", base and adapter",
                patchbay(base, List.of(new Request(withAdapter, 1)), adapter).get(0), jlamaMerged.get(0)));
        List<Trace> mixed = patchbay(base, List.of(new Request(withAdapter, 1), Request.base(withoutAdapter)), adapter);
        worst = Math.max(worst, assertMatches(shape + ", batch, the request with the adapter", mixed.get(0), jlamaMerged.get(0)));
        worst = Math.max(worst, assertMatches(shape + ", batch, the request without", mixed.get(1), jlamaBase.get(0)));
        report(shape + " with a rank-8 adapter on all projections", worst);
    }

    /** The comparison can fail: one of the 2^17 MLP weights of layer 1 changed by 0.1 is far outside the tolerance. */
    @Test
    void oneChangedWeightFailsTheComparison() throws Exception {
        Path model = dir.resolve("model");
        Path changed = dir.resolve("changed");
        ModelGenerator.writeModel(model, LLAMA);
        ModelFiles.copyWithWeights(model, changed, w -> w.get("model.layers.1.mlp.down_proj.weight").values()[1000] += 0.1f);
        Trace reference = jlama(changed, List.of(PROMPTS.get(1))).get(0);
        Trace patchbay = patchbay(model, List.of(Request.base(PROMPTS.get(1))), null).get(0);
        assertThatThrownBy(() -> assertMatches("one weight changed", patchbay, reference)).isInstanceOf(AssertionError.class);
    }

    /**
     * Checks each step in turn: logits within {@link #TOLERANCE} of the reference's, then the same greedy token.
     * Returns the largest relative difference.
     */
    static double assertMatches(String what, Trace actual, Trace expected) {
        double worst = 0;
        for (int step = 0; step < STEPS; step++) {
            double d = relativeDifference(actual.logits()[step], expected.logits()[step]);
            assertThat(d).as("%s, step %d: max |logit difference| / max |reference logit|", what, step)
                    .isLessThanOrEqualTo(TOLERANCE);
            assertThat(actual.tokens()[step]).as("%s, step %d: greedy token", what, step).isEqualTo(expected.tokens()[step]);
            worst = Math.max(worst, d);
        }
        return worst;
    }

    static double relativeDifference(float[] actual, float[] expected) {
        assertThat(actual).hasSameSizeAs(expected);
        double maxRef = 0, maxDiff = 0;
        for (int i = 0; i < expected.length; i++) {
            maxRef = Math.max(maxRef, Math.abs(expected[i]));
            maxDiff = Math.max(maxDiff, Math.abs(actual[i] - expected[i]));
        }
        assertThat(maxRef).isGreaterThan(0);
        return maxDiff / maxRef;
    }

    /** The measured margin, so a run shows how far inside the tolerance each shape is. */
    private static void report(String what, double worst) {
        System.out.printf("Jlama differential, %s: max relative logit difference %.2e (tolerance %.0e)%n", what, worst, TOLERANCE);
    }

    private AbstractModel loadJlama(Path model) {
        // F32 working memory and no quantization: Jlama then computes in F32, as Patchbay does on F32 weights.
        return ModelSupport.loadModel(model.toFile(), dir.toFile(), DType.F32, DType.F32, Optional.empty(), Optional.empty());
    }

    private List<Trace> jlama(Path model, List<int[]> prompts) {
        AbstractModel jlama = loadJlama(model);
        try {
            return prompts.stream().map(p -> GreedyRuns.jlama(jlama, p, STEPS)).toList();
        } finally {
            jlama.close();
        }
    }

    /** Loads the model (with {@code adapter}, if given, in slot 1) and runs the requests in one batch. */
    private static List<Trace> patchbay(Path model, List<Request> requests, Path adapter) throws Exception {
        try (LlamaModel m = LlamaModel.load(model, requests.size() * GreedyRuns.BLOCKS_PER_SEQUENCE, GreedyRuns.BLOCK_SIZE,
                2, 2, null)) {
            LlamaExecutor ex = m.executor();
            if (adapter != null) ex.activate(1, ex.loadAdapter(PeftReader.read("adapter", adapter, m.config(), 16)));
            return GreedyRuns.patchbay(ex, requests, STEPS);
        }
    }
}
