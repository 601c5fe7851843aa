package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.ScheduledSequence;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
            assertThat(Sampler.sample(logits, params(1, 1e-6, -1), new Random(i)))
                    .isEqualTo(best);
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

    /** Top-k then top-p over the whole vocabulary sorted, as the definition reads. */
    static int referenceSample(float[] logits, SamplingParams p, Random rng) {
        int n = logits.length;
        float max = logits[Sampler.argmax(logits)];
        float[] prob = new float[n];
        double sum = 0;
        for (int i = 0; i < n; i++) sum += prob[i] = (float) Math.exp((logits[i] - max) * (1.0 / p.temperature()));
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> prob[a] != prob[b] ? Float.compare(prob[b], prob[a]) : Integer.compare(b, a));
        int keep = p.topK() > 0 ? Math.min(p.topK(), n) : n;
        double kept = 0;
        for (int j = 0; j < keep; j++) kept += prob[order[j]];
        if (p.topK() <= 0) kept = sum;
        double mass = 0;
        int j = 0;
        while (j < keep) {
            mass += prob[order[j++]] / kept;
            if (mass >= p.topP()) break;
        }
        keep = j;
        double total = 0;
        for (int i = 0; i < keep; i++) total += prob[order[i]];
        double r = rng.nextDouble() * total;
        for (int i = 0; i < keep; i++) {
            r -= prob[order[i]];
            if (r <= 0) return order[i];
        }
        return order[keep - 1];
    }

    @Test
    void filteringACandidateSetEqualsSortingTheWholeVocabulary() {
        List<SamplingParams> cases =
                List.of(params(0.8, 0.9, -1), params(1, 0.5, 50), params(1.2, 1, 5), params(2, 0.95, 1000));
        for (int v = 0; v < 20; v++) {
            float[] logits = randomLogits(3000, 100 + v);
            for (SamplingParams p : cases) {
                Random a = new Random(v), b = new Random(v);
                for (int draw = 0; draw < 5; draw++) {
                    assertThat(Sampler.sample(logits, p, a)).isEqualTo(referenceSample(logits, p, b));
                }
            }
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
            int next = model.executor()
                    .execute(new Batch(List.of(s), tokens.length, 0, 1, 0, 4))
                    .nextTokens()[0];
            out.add(next);
            pos += tokens.length;
            tokens = new int[] {next};
        }
        return out;
    }
}
