package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.ScheduledSequence;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SamplingTest {
    @TempDir
    Path dir;

    static SamplingParams params(double temperature, double topP, int topK) {
        return new SamplingParams(16, temperature, topP, topK, 42L, List.of(), List.of(), false, 1);
    }

    static float[] randomLogits(int n, long seed) {
        Random r = new Random(seed);
        float[] l = new float[n];
        for (int i = 0; i < n; i++) l[i] = (float) (r.nextGaussian() * 2);
        return l;
    }

    @Test
    void greedyAndDegenerateFiltersPickTheArgmax() {
        float[] logits = randomLogits(1000, 1);
        int best = Sampler.argmax(logits);
        assertThat(Sampler.sample(logits, params(0, 1, -1), new Random(1))).isEqualTo(best);
        for (int i = 0; i < 20; i++) {
            assertThat(Sampler.sample(logits, params(1, 1, 1), new Random(i))).isEqualTo(best);
            assertThat(Sampler.sample(logits, params(1, 1e-6, -1), new Random(i))).isEqualTo(best);
        }
    }

    @Test
    void drawsFollowTheSoftmaxAndTheFilters() {
        float[] logits = {0, (float) Math.log(3), -30, -30};
        int second = 0, n = 20_000;
        Random rng = new Random(7);
        for (int i = 0; i < n; i++) if (Sampler.sample(logits, params(1, 1, -1), rng) == 1) second++;
        assertThat(second / (double) n).isBetween(0.73, 0.77);
        // top-k 2 never picks the tails; top-p 0.7 keeps only the 0.75 token.
        for (int i = 0; i < 500; i++) {
            assertThat(Sampler.sample(logits, params(1, 1, 2), rng)).isIn(0, 1);
            assertThat(Sampler.sample(logits, params(1, 0.7, -1), rng)).isEqualTo(1);
        }
    }

    @Test
    void sameSeedSameTokensThroughTheExecutor() throws Exception {
        ModelGenerator.writeModel(dir, ModelGenerator.Spec.tiny());
        try (LlamaModel model = LlamaModel.load(dir, 32, 4, 1, 2, null)) {
            List<Integer> first = generate(model, 42), second = generate(model, 42), other = generate(model, 43);
            assertThat(first).hasSize(12).isEqualTo(second).isNotEqualTo(other);
        }
    }

    private static List<Integer> generate(LlamaModel model, long seed) {
        SamplingParams p = new SamplingParams(12, 1.5, 0.95, 50, seed, List.of(), List.of(), false, 1);
        SplittableRandom rng = new SplittableRandom(seed);
        int[] blocks = {0, 1, 2, 3, 4, 5};
        int[] tokens = {10, 20, 30, 40};
        int pos = 0;
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            ScheduledSequence s = new ScheduledSequence(1, tokens, pos, blocks, -1, true, p, rng, tokens, i);
            int next = model.executor().execute(new Batch(List.of(s), tokens.length, 0, 1, 0, 4)).nextTokens()[0];
            out.add(next);
            pos += tokens.length;
            tokens = new int[] {next};
        }
        return out;
    }
}
