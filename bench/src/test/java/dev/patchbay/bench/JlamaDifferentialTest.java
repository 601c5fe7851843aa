package dev.patchbay.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import dev.patchbay.bench.GreedyRuns.Request;
import dev.patchbay.bench.GreedyRuns.Trace;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.ScheduledSequence;
import dev.patchbay.engine.exec.StepResult;
import dev.patchbay.engine.exec.TokenLogprobs;
import dev.patchbay.model.LlamaExecutor;
import dev.patchbay.model.LlamaModel;
import dev.patchbay.model.ModelGenerator;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Patchbay's forward pass against Jlama 0.8.4's, an implementation written independently, on the same generated
 * models: from token ids (no tokenizer involved), greedy tokens must be the same for {@link #STEPS} steps and every
 * step's logits within {@link #TOLERANCE}. Both compute in F32 (Jlama widens BF16 and F16 weights on load), so what
 * is left is summation order and RoPE angles (Jlama's are computed in float).
 */
class JlamaDifferentialTest {
    /** max |Patchbay logit - Jlama logit| over the vocabulary, divided by max |Jlama logit|, at every step. */
    static final double TOLERANCE = 1e-5;

    static final int STEPS = 8;
    static final List<String> ALL_PROJECTIONS =
            List.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj");
    /** One token, a short prompt, and one longer than {@link #WINDOW}. */
    static final List<int[]> PROMPTS = List.of(new int[] {7}, new int[] {300, 12, 45, 45, 260, 1, 99}, new int[] {
        5, 17, 300, 2, 99, 42, 42, 7, 260, 1, 33, 8, 150, 77, 410, 3, 64, 64, 200, 11
    });

    static final int WINDOW = 6;
    /** Log probabilities are compared absolutely: logits agree within {@link #TOLERANCE} of a range of about 10. */
    static final double LOGPROB_TOLERANCE = 1e-4;

    static final int LOGPROBS_TOP = 5;

    static final ModelGenerator.Spec LLAMA =
            new ModelGenerator.Spec("LlamaForCausalLM", 128, 2, 4, 2, 256, 512, "F32", 11, false, null);

    @TempDir
    Path dir;

    static Stream<Arguments> shapes() {
        ModelGenerator.Spec qwen2 = LLAMA.withArchitecture("Qwen2ForCausalLM").withSeed(13);
        return Stream.of(
                Arguments.of("Llama, 4 heads on 2 KV heads", LLAMA),
                Arguments.of(
                        "Llama, 4 heads and 4 KV heads",
                        new ModelGenerator.Spec("LlamaForCausalLM", 128, 2, 4, 4, 256, 512, "F32", 12, false, null)),
                Arguments.of(
                        "Llama, linear RoPE scaling",
                        LLAMA.withRopeScaling("{\"rope_type\":\"linear\",\"factor\":2.0}")),
                Arguments.of("Llama, BF16 weights", LLAMA.withDtype("BF16")),
                Arguments.of("Llama, F16 weights", LLAMA.withDtype("F16")),
                Arguments.of("Qwen2, q/k/v bias", qwen2),
                Arguments.of("Qwen2, q/k/v bias, tied embeddings", qwen2.withTiedEmbeddings(true)),
                Arguments.of(
                        "Mistral, no sliding window",
                        LLAMA.withArchitecture("MistralForCausalLM").withSeed(14)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    void greedyTokensAndLogitsMatchJlama(String shape, ModelGenerator.Spec spec) throws Exception {
        Path model = dir.resolve("model");
        ModelGenerator.writeModel(model, spec);
        List<Trace> reference = jlama(model, PROMPTS);
        List<Trace> patchbay =
                patchbay(model, PROMPTS.stream().map(Request::base).toList(), null);
        double worst = 0;
        for (int p = 0; p < PROMPTS.size(); p++) {
            worst = Math.max(worst, assertMatches(shape + ", prompt " + p, patchbay.get(p), reference.get(p)));
        }
        report(shape, worst);
    }

    static Stream<Arguments> settingsJlamaIgnores() {
        ModelGenerator.Spec mistral =
                LLAMA.withArchitecture("MistralForCausalLM").withSeed(14);
        ModelGenerator.Spec qwen2 = LLAMA.withArchitecture("Qwen2ForCausalLM").withSeed(13);
        Map<String, Object> linear = Map.of("rope_type", "linear", "factor", 2.0);
        return Stream.of(
                Arguments.of("Mistral, sliding_window", mistral, Map.of("sliding_window", WINDOW)),
                Arguments.of(
                        "Qwen2, use_sliding_window",
                        qwen2,
                        Map.of("sliding_window", WINDOW, "use_sliding_window", true, "max_window_layers", 0)),
                Arguments.of(
                        "Llama, rope_scaling llama3",
                        LLAMA,
                        Map.of(
                                "rope_scaling",
                                Map.of(
                                        "rope_type",
                                        "llama3",
                                        "factor",
                                        8.0,
                                        "low_freq_factor",
                                        1.0,
                                        "high_freq_factor",
                                        4.0,
                                        "original_max_position_embeddings",
                                        16))),
                Arguments.of(
                        "Llama, rope_scaling yarn",
                        LLAMA,
                        Map.of(
                                "rope_scaling",
                                Map.of("rope_type", "yarn", "factor", 4.0, "original_max_position_embeddings", 2048))),
                Arguments.of(
                        "Llama, rope_scaling dynamic",
                        LLAMA,
                        Map.of("rope_scaling", Map.of("rope_type", "dynamic", "factor", 4.0))),
                Arguments.of(
                        "Llama, rope_scaling linear named by 'type'",
                        LLAMA,
                        Map.of("rope_scaling", Map.of("type", "linear", "factor", 2.0))),
                Arguments.of("Qwen2, rope_scaling linear", qwen2, Map.of("rope_scaling", linear)),
                Arguments.of("Mistral, rope_scaling linear", mistral, Map.of("rope_scaling", linear)));
    }

    /**
     * Settings Jlama 0.8.4 does not read: Patchbay applies them and so differs from Jlama on the longest prompt; with
     * them set to null Patchbay matches Jlama, which shows that the setting is the whole difference.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("settingsJlamaIgnores")
    void jlamaIgnoresTheSettingAndMatchesPatchbayWithoutIt(
            String setting, ModelGenerator.Spec spec, Map<String, Object> fields) throws Exception {
        Path with = dir.resolve("with");
        ModelGenerator.writeModel(with, spec);
        for (var f : fields.entrySet()) ModelFiles.editConfig(with, f.getKey(), f.getValue());
        Path without = dir.resolve("without");
        ModelFiles.copy(with, without);
        for (String f : fields.keySet()) ModelFiles.editConfig(without, f, null);

        List<Trace> jlama = jlama(with, PROMPTS);
        int longest = PROMPTS.size() - 1;
        Trace patchbayWith = patchbay(with, List.of(Request.base(PROMPTS.get(longest))), null)
                .get(0);
        double applied =
                relativeDifference(patchbayWith.logits()[0], jlama.get(longest).logits()[0]);
        assertThat(applied).as("the setting changes Patchbay's logits").isGreaterThan(1000 * TOLERANCE);
        List<Trace> patchbayWithout =
                patchbay(without, PROMPTS.stream().map(Request::base).toList(), null);
        double worst = 0;
        for (int p = 0; p < PROMPTS.size(); p++) {
            worst = Math.max(
                    worst, assertMatches(setting + " removed, prompt " + p, patchbayWithout.get(p), jlama.get(p)));
        }
        report(
                String.format(
                        "%s, which Jlama ignores (Patchbay with it: %.2f on the longest prompt's first step);"
                                + " Patchbay without it",
                        setting, applied),
                worst);
    }

    /**
     * The window itself against Jlama: on a one-layer Mistral each position's keys and values come from its own token,
     * so Jlama run on the last {@link #WINDOW} tokens alone computes what the windowed attention should.
     */
    @Test
    void mistralSlidingWindowMatchesJlamaRunOnTheWindowAlone() throws Exception {
        Path model = dir.resolve("model");
        ModelGenerator.writeModel(
                model, new ModelGenerator.Spec("MistralForCausalLM", 128, 1, 4, 2, 256, 512, "F32", 15, false, null));
        ModelFiles.editConfig(model, "sliding_window", WINDOW);
        List<Trace> patchbay =
                patchbay(model, PROMPTS.stream().map(Request::base).toList(), null);
        double worst = 0;
        AbstractModel jlama = loadJlama(model);
        try {
            for (int p = 0; p < PROMPTS.size(); p++) {
                Trace reference = GreedyRuns.jlamaWindowed(jlama, PROMPTS.get(p), STEPS, WINDOW);
                worst = Math.max(
                        worst,
                        assertMatches(
                                "one-layer Mistral, window " + WINDOW + ", prompt " + p, patchbay.get(p), reference));
            }
        } finally {
            jlama.close();
        }
        report("Mistral, one layer, sliding_window " + WINDOW, worst);
    }

    static Stream<Arguments> adapterShapes() {
        return Stream.of(
                Arguments.of("Llama", LLAMA),
                Arguments.of("Qwen2", LLAMA.withArchitecture("Qwen2ForCausalLM").withSeed(13)));
    }

    static Stream<Arguments> logprobShapes() {
        return Stream.of(
                Arguments.of("Llama", LLAMA),
                Arguments.of(
                        "Mistral", LLAMA.withArchitecture("MistralForCausalLM").withSeed(14)),
                Arguments.of(
                        "Qwen2, q/k/v bias",
                        LLAMA.withArchitecture("Qwen2ForCausalLM").withSeed(13)));
    }

    /**
     * The log probabilities a request asking for {@code logprobs} gets for its first token, as the executor reports
     * them through a step, against a log-softmax (in double) of Jlama's logits after the same prompt: the same
     * greedy token with the same rank, the same top tokens in the same order, values within
     * {@link #LOGPROB_TOLERANCE}.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("logprobShapes")
    void firstTokenLogprobsMatchALogSoftmaxOfJlamasLogits(String shape, ModelGenerator.Spec spec) throws Exception {
        Path model = dir.resolve("model");
        ModelGenerator.writeModel(model, spec);
        List<Trace> reference = jlama(model, PROMPTS);
        List<TokenLogprobs> patchbay = firstTokenLogprobs(model, PROMPTS, LOGPROBS_TOP);
        double worst = 0;
        for (int p = 0; p < PROMPTS.size(); p++) {
            float[] logits = reference.get(p).logits()[0];
            double logZ = logSumExp(logits);
            TokenLogprobs got = patchbay.get(p);
            int[] expectedTop = topIds(logits, LOGPROBS_TOP);
            assertThat(got.tokenId())
                    .as(shape + ", prompt " + p + ": greedy token")
                    .isEqualTo(reference.get(p).tokens()[0]);
            assertThat(got.rank()).as("the greedy token's rank").isEqualTo(1);
            assertThat(got.topIds())
                    .as(shape + ", prompt " + p + ": top tokens")
                    .containsExactly(expectedTop);
            worst = Math.max(worst, Math.abs(got.logprob() - (logits[got.tokenId()] - logZ)));
            for (int k = 0; k < LOGPROBS_TOP; k++) {
                worst = Math.max(worst, Math.abs(got.topLogprobs()[k] - (logits[expectedTop[k]] - logZ)));
            }
        }
        assertThat(worst)
                .as(shape + ": largest difference of a log probability")
                .isLessThanOrEqualTo(LOGPROB_TOLERANCE);
        System.out.printf(
                Locale.ROOT,
                "Jlama, first-token logprobs, %s: max difference %.1e (tolerance %.0e)%n",
                shape,
                worst,
                LOGPROB_TOLERANCE);
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
        assertThat(relativeDifference(
                        jlamaMerged.get(0).logits()[0], jlamaBase.get(1).logits()[0]))
                .as("the adapter changes the logits")
                .isGreaterThan(1000 * TOLERANCE);

        double worst = assertMatches(
                shape + ", merged weights, no adapter",
                patchbay(merged, List.of(Request.base(withAdapter)), null).get(0),
                jlamaMerged.get(0));
        worst = Math.max(
                worst,
                assertMatches(
                        shape + ", base and adapter",
                        patchbay(base, List.of(new Request(withAdapter, 1)), adapter)
                                .get(0),
                        jlamaMerged.get(0)));
        List<Trace> mixed = patchbay(base, List.of(new Request(withAdapter, 1), Request.base(withoutAdapter)), adapter);
        worst = Math.max(
                worst,
                assertMatches(shape + ", batch, the request with the adapter", mixed.get(0), jlamaMerged.get(0)));
        worst = Math.max(worst, assertMatches(shape + ", batch, the request without", mixed.get(1), jlamaBase.get(0)));
        report(shape + " with a rank-8 adapter on all projections", worst);
    }

    /** The comparison can fail: one of layer 1's 32,768 down_proj weights changed by 0.1 already fails the first step. */
    @Test
    void oneChangedWeightFailsTheComparison() throws Exception {
        Path model = dir.resolve("model");
        Path changed = dir.resolve("changed");
        ModelGenerator.writeModel(model, LLAMA);
        ModelFiles.copyWithWeights(
                model,
                changed,
                w -> w.get("model.layers.1.mlp.down_proj.weight").values()[1000] += 0.1f);
        Trace reference = jlama(changed, List.of(PROMPTS.get(1))).get(0);
        Trace patchbay =
                patchbay(model, List.of(Request.base(PROMPTS.get(1))), null).get(0);
        assertThatThrownBy(() -> assertMatches("one weight changed", patchbay, reference))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("step 0: max |logit difference|");
    }

    /**
     * Checks each step in turn: logits within {@link #TOLERANCE} of the reference's, then the same greedy token.
     * Returns the largest relative difference.
     */
    static double assertMatches(String what, Trace actual, Trace expected) {
        double worst = 0;
        for (int step = 0; step < STEPS; step++) {
            double d = relativeDifference(actual.logits()[step], expected.logits()[step]);
            assertThat(d)
                    .as("%s, step %d: max |logit difference| / max |reference logit|", what, step)
                    .isLessThanOrEqualTo(TOLERANCE);
            assertThat(actual.tokens()[step])
                    .as("%s, step %d: greedy token", what, step)
                    .isEqualTo(expected.tokens()[step]);
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
        System.out.printf(
                "Jlama differential, %s: max relative logit difference %.2e (tolerance %.0e)%n",
                what, worst, TOLERANCE);
    }

    private AbstractModel loadJlama(Path model) throws IOException {
        // F32 working memory, and 16-bit weights widened to F32 on load: Jlama then computes in F32 throughout, as
        // Patchbay does (left to itself, Jlama rounds activations to BF16 before each product with BF16 weights).
        boolean half = !ModelFiles.dtype(model).equals("F32");
        return ModelSupport.loadModel(
                model.toFile(),
                dir.toFile(),
                DType.F32,
                DType.F32,
                half ? Optional.of(DType.F32) : Optional.empty(),
                Optional.empty());
    }

    private List<Trace> jlama(Path model, List<int[]> prompts) throws IOException {
        AbstractModel jlama = loadJlama(model);
        try {
            return prompts.stream().map(p -> GreedyRuns.jlama(jlama, p, STEPS)).toList();
        } finally {
            jlama.close();
        }
    }

    /** Loads the model (with {@code adapter}, if given, in slot 1) and runs the requests in one batch. */
    private static List<Trace> patchbay(Path model, List<Request> requests, Path adapter) throws Exception {
        try (LlamaModel m = LlamaModel.load(
                model, requests.size() * GreedyRuns.BLOCKS_PER_SEQUENCE, GreedyRuns.BLOCK_SIZE, 2, 2, null)) {
            LlamaExecutor ex = m.executor();
            if (adapter != null) ex.activate(1, ex.loadAdapter(PeftReader.read("adapter", adapter, m.config(), 16)));
            return GreedyRuns.patchbay(ex, requests, STEPS);
        }
    }

    /** The executor's first step over each prompt, in one batch, each request asking for the top {@code top}. */
    private static List<TokenLogprobs> firstTokenLogprobs(Path model, List<int[]> prompts, int top) throws Exception {
        try (LlamaModel m = LlamaModel.load(
                model, prompts.size() * GreedyRuns.BLOCKS_PER_SEQUENCE, GreedyRuns.BLOCK_SIZE, 2, 2, null)) {
            List<ScheduledSequence> seqs = new ArrayList<>();
            int tokens = 0;
            for (int s = 0; s < prompts.size(); s++) {
                int[] blocks = IntStream.range(
                                s * GreedyRuns.BLOCKS_PER_SEQUENCE, (s + 1) * GreedyRuns.BLOCKS_PER_SEQUENCE)
                        .toArray();
                seqs.add(new ScheduledSequence(
                        s,
                        prompts.get(s),
                        0,
                        blocks,
                        -1,
                        true,
                        SamplingParams.greedy(1).withLogprobs(top, null),
                        new SplittableRandom(s),
                        prompts.get(s),
                        0));
                tokens += prompts.get(s).length;
            }
            StepResult step = m.executor().execute(new Batch(seqs, tokens, tokens, 0, 0, GreedyRuns.BLOCK_SIZE));
            List<TokenLogprobs> out = new ArrayList<>();
            for (int s = 0; s < seqs.size(); s++) out.add(step.sampleLogprobs(s));
            return out;
        }
    }

    private static double logSumExp(float[] logits) {
        double max = Double.NEGATIVE_INFINITY;
        for (float v : logits) max = Math.max(max, v);
        double sum = 0;
        for (float v : logits) sum += Math.exp(v - max);
        return max + Math.log(sum);
    }

    /** The ids of the {@code k} largest logits, largest first, ties to the lower id. */
    private static int[] topIds(float[] logits, int k) {
        return IntStream.range(0, logits.length)
                .boxed()
                .sorted((a, b) -> logits[a] != logits[b] ? Float.compare(logits[b], logits[a]) : Integer.compare(a, b))
                .limit(k)
                .mapToInt(Integer::intValue)
                .toArray();
    }
}
