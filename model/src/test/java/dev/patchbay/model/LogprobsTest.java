package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.ScheduledSequence;
import dev.patchbay.engine.exec.StepResult;
import dev.patchbay.engine.exec.TokenLogprobs;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real executor's log probabilities are the log-softmax of the logits each request's sampler saw: its own
 * adapter's, with other adapters in the same batch, and before temperature. The expected values come from the
 * executor's logits of each request run alone, put through a log-softmax written here.
 */
class LogprobsTest {
    static final int BLOCK = 4;
    static final int[] PROMPT = {5, 17, 300, 2, 99, 42, 42, 7, 260, 1};
    static final int TOP = 5;

    @TempDir
    Path dir;

    LlamaModel model;

    @BeforeEach
    void load() throws Exception {
        ModelGenerator.Spec spec = ModelGenerator.Spec.tiny();
        ModelGenerator.writeModel(dir.resolve("model"), spec);
        model = LlamaModel.load(dir.resolve("model"), 64, BLOCK, 2, 2);
        List<String> targets = List.of("q_proj", "v_proj", "o_proj", "down_proj");
        for (int slot = 0; slot < 2; slot++) {
            Path adapter = dir.resolve("adapter" + slot);
            // Strong adapters (alpha 64), so that each one moves the distribution well beyond the tolerance.
            ModelGenerator.writeAdapter(adapter, spec, 8, 64, targets, 100 + slot);
            model.executor()
                    .activate(
                            slot,
                            model.executor().loadAdapter(PeftReader.read("a" + slot, adapter, model.config(), 16)));
        }
    }

    @AfterEach
    void close() {
        model.close();
    }

    private static SamplingParams params(double temperature, Integer logprobs, Integer promptLogprobs) {
        return new SamplingParams(16, temperature, 1, -1, 9L, List.of(), List.of(), false, 1, logprobs, promptLogprobs);
    }

    private static ScheduledSequence seq(
            long id, int[] tokens, int start, int[] blocks, int slot, boolean sample, SamplingParams p) {
        return new ScheduledSequence(id, tokens, start, blocks, slot, sample, p, new SplittableRandom(id), PROMPT, 0);
    }

    private static int[] blocks(int first) {
        return new int[] {first, first + 1, first + 2};
    }

    /** Log-softmax in double, the plain way. */
    static double[] logSoftmax(float[] logits) {
        double max = Double.NEGATIVE_INFINITY;
        for (float v : logits) max = Math.max(max, v);
        double sum = 0;
        for (float v : logits) sum += Math.exp(v - max);
        double[] out = new double[logits.length];
        for (int i = 0; i < logits.length; i++) out[i] = logits[i] - max - Math.log(sum);
        return out;
    }

    /** The executor's own logits after {@code tokens}, computed alone in fresh KV blocks. */
    private float[] aloneLogits(int[] tokens, int slot) {
        return model.executor().forward(List.of(seq(99, tokens, 0, blocks(40), slot, true, params(0, null, null))))[0];
    }

    private static void assertMatches(TokenLogprobs got, double[] expected, int token) {
        assertThat(got.tokenId()).isEqualTo(token);
        assertThat((double) got.logprob()).isCloseTo(expected[token], within(1e-4));
        double[] sorted =
                Arrays.stream(expected).map(v -> -v).sorted().map(v -> -v).toArray();
        assertThat(got.numTop()).isEqualTo(TOP);
        for (int j = 0; j < TOP; j++) {
            assertThat((double) got.topLogprobs()[j]).as("top %d", j).isCloseTo(sorted[j], within(1e-4));
            assertThat((double) got.topLogprobs()[j]).isCloseTo(expected[got.topIds()[j]], within(1e-4));
        }
        long better =
                Arrays.stream(expected).filter(v -> v > expected[token] + 1e-4).count();
        assertThat(got.rank()).isGreaterThan((int) better);
    }

    @Test
    void sampledTokensLogprobsAreTheLogSoftmaxOfTheirOwnAdaptersLogits() {
        // One prompt three times in one batch: adapter 0 and base greedy, adapter 1 at temperature 1.5.
        int[] slots = {0, 1, -1};
        double[] temperatures = {0, 1.5, 0};
        List<ScheduledSequence> batch = List.of(
                seq(1, PROMPT, 0, blocks(0), 0, true, params(0, TOP, null)),
                seq(2, PROMPT, 0, blocks(10), 1, true, params(1.5, TOP, null)),
                seq(3, PROMPT, 0, blocks(20), -1, true, params(0, TOP, null)));
        StepResult result =
                model.executor().execute(new Batch(batch, 3 * PROMPT.length, 3 * PROMPT.length, 0, 2, BLOCK));

        double[][] expected = new double[3][];
        for (int s = 0; s < 3; s++) {
            expected[s] = logSoftmax(aloneLogits(PROMPT, slots[s]));
            TokenLogprobs got = result.sampleLogprobs(s);
            int token = result.nextTokens()[s];
            assertMatches(got, expected[s], token);
            if (temperatures[s] == 0) {
                assertThat(got.rank())
                        .as("greedy token of sequence %d is the most likely", s)
                        .isEqualTo(1);
                assertThat(got.topIds()[0]).isEqualTo(token);
                assertThat(got.logprob()).isEqualTo(got.topLogprobs()[0]);
            }
        }
        // The three distributions differ, so a request given another's adapter would fail the comparison above.
        for (int a = 0; a < 3; a++) {
            for (int b = a + 1; b < 3; b++)
                assertThat(maxDifference(expected[a], expected[b])).isGreaterThan(1e-2);
        }
        assertThat(result.promptLogprobs()).isNull();
    }

    @Test
    void promptLogprobsAreTheLogSoftmaxAtEachPositionAcrossChunks() {
        // Adapter 0's request asks for prompt logprobs and arrives in two chunks; adapter 1's asks for none.
        SamplingParams wants = params(0, TOP, TOP);
        int cut = 6;
        StepResult first = model.executor()
                .execute(new Batch(
                        List.of(
                                seq(1, Arrays.copyOfRange(PROMPT, 0, cut), 0, blocks(0), 0, false, wants),
                                seq(2, PROMPT, 0, blocks(10), 1, true, params(0, null, null))),
                        cut + PROMPT.length,
                        cut + PROMPT.length,
                        0,
                        2,
                        BLOCK));
        StepResult second = model.executor()
                .execute(new Batch(
                        List.of(seq(1, Arrays.copyOfRange(PROMPT, cut, PROMPT.length), cut, blocks(0), 0, true, wants)),
                        PROMPT.length - cut,
                        PROMPT.length - cut,
                        0,
                        1,
                        BLOCK));
        assertThat(first.promptLogprobs(1)).isNull();
        assertThat(first.sampleLogprobs()).isNull();
        TokenLogprobs[] a = first.promptLogprobs(0), b = second.promptLogprobs(0);
        assertThat(a).hasSize(cut);
        assertThat(b).hasSize(PROMPT.length - 1 - cut);
        for (int p = 1; p < PROMPT.length; p++) {
            TokenLogprobs got = p <= cut ? a[p - 1] : b[p - 1 - cut];
            double[] expected = logSoftmax(aloneLogits(Arrays.copyOfRange(PROMPT, 0, p), 0));
            assertMatches(got, expected, PROMPT[p]);
        }
        // The last chunk's sample is reported as a sampled token, not as a prompt token.
        assertMatches(second.sampleLogprobs(0), logSoftmax(aloneLogits(PROMPT, 0)), second.nextTokens()[0]);
    }

    private static double maxDifference(double[] a, double[] b) {
        double d = 0;
        for (int i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
        return d;
    }
}
