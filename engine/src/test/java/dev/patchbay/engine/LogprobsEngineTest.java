package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.patchbay.engine.exec.Logprobs;
import dev.patchbay.engine.exec.TokenLogprobs;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Log probabilities: the log-softmax itself, and how the engine gathers them across chunks and preemptions. */
class LogprobsEngineTest {
    @TempDir
    Path dir;

    @Test
    void logSoftmaxGivesValueRankAndTopDescending() {
        float[] logits = {0, (float) Math.log(3), -30, -30};
        TokenLogprobs lp = Logprobs.of(logits, 0, 2);
        assertThat((double) lp.logprob()).isCloseTo(Math.log(0.25), within(1e-6));
        assertThat(lp.rank()).isEqualTo(2);
        assertThat(lp.topIds()).containsExactly(1, 0);
        assertThat((double) lp.topLogprobs()[0]).isCloseTo(Math.log(0.75), within(1e-6));
        assertThat(lp.topLogprobs()[1]).isEqualTo(lp.logprob());
        // Asking for more than the vocabulary gives all of it, summing to one.
        TokenLogprobs all = Logprobs.of(logits, 3, 10);
        assertThat(all.topIds()).containsExactly(1, 0, 2, 3);
        double sum = 0;
        for (float v : all.topLogprobs()) sum += Math.exp(v);
        assertThat(sum).isCloseTo(1, within(1e-6));
        assertThat(all.rank()).isEqualTo(4);
    }

    @Test
    void tiesShareTheLowerRankAndKeepTheLowerIdFirst() {
        float[] logits = {1, 1, 0};
        TokenLogprobs lp = Logprobs.of(logits, 1, 2);
        // As in vLLM, the rank counts the tokens at least as likely, the token itself included.
        assertThat(lp.rank()).isEqualTo(2);
        assertThat(lp.topIds()).containsExactly(0, 1);
        assertThat(Logprobs.of(logits, 2, 0).topIds()).isEmpty();
    }

    private static int[] prompt(int length) {
        int[] p = new int[length];
        for (int i = 0; i < length; i++) p[i] = 260 + (i * 7) % 100;
        return p;
    }

    private static void assertWellFormed(TokenLogprobs lp, int token, int top) {
        assertThat(lp.tokenId()).isEqualTo(token);
        assertThat(Float.isFinite(lp.logprob()) && lp.logprob() <= 0)
                .as("logprob %s", lp.logprob())
                .isTrue();
        assertThat(lp.numTop()).isEqualTo(top);
        for (int j = 0; j < top; j++) {
            assertThat(lp.topLogprobs()[j]).isLessThanOrEqualTo(j == 0 ? 0 : lp.topLogprobs()[j - 1]);
            if (lp.topIds()[j] == token) assertThat(lp.topLogprobs()[j]).isEqualTo(lp.logprob());
        }
    }

    @Test
    void promptAndSampleLogprobsSurviveChunksAndPreemption() throws Exception {
        // 6 blocks of 4 tokens for two requests of 8 + 10 tokens each: one gets preempted and recomputed;
        // 3 tokens per step splits each prompt into chunks.
        EngineFixture f = new EngineFixture(
                EngineFixture.config()
                        .blockSize(4)
                        .numKvBlocks(6)
                        .maxNumBatchedTokens(3)
                        .build(),
                LatencyModel.DEFAULT,
                TextMode.RANDOM,
                dir);
        SamplingParams params = SamplingParams.fixedLength(10).withLogprobs(2, 3);
        int[] p = prompt(8);
        long a = f.submit(null, p, params);
        long b = f.submit(null, p, params);
        f.driver.runToCompletion();
        assertThat(f.latest().counters().preemptions()).isPositive();
        for (long id : List.of(a, b)) {
            List<RequestOutput> outs = f.outputs.get(id);
            assertThat(outs.get(0).promptLogprobs()).hasSize(p.length);
            assertThat(outs.get(0).promptLogprobs().get(0)).isNull();
            for (int i = 1; i < p.length; i++)
                assertWellFormed(outs.get(0).promptLogprobs().get(i), p[i], 3);
            assertThat(outs.stream().skip(1).allMatch(o -> o.promptLogprobs() == null))
                    .isTrue();
            List<TokenLogprobs> sampled = new ArrayList<>();
            List<Integer> tokens = new ArrayList<>();
            for (RequestOutput o : outs) {
                assertThat(o.logprobs()).hasSize(o.newTokenIds().length);
                sampled.addAll(o.logprobs());
                Arrays.stream(o.newTokenIds()).forEach(tokens::add);
            }
            assertThat(tokens).hasSize(10);
            for (int i = 0; i < 10; i++) assertWellFormed(sampled.get(i), tokens.get(i), 2);
        }
        // The simulated model's values depend only on the text, so both requests saw the same prompt distribution.
        assertThat(f.outputs.get(a).get(0).promptLogprobs())
                .usingRecursiveFieldByFieldElementComparator()
                .isEqualTo(f.outputs.get(b).get(0).promptLogprobs());
    }

    @Test
    void requestsThatAskForNoneGetNone() throws Exception {
        EngineFixture f = new EngineFixture(EngineFixture.config().build(), LatencyModel.DEFAULT, TextMode.RANDOM, dir);
        long id = f.submit(null, prompt(5), SamplingParams.fixedLength(3));
        f.driver.runToCompletion();
        assertThat(f.outputs.get(id)).allMatch(o -> o.logprobs() == null && o.promptLogprobs() == null);
    }

    @Test
    void moreThanMaxLogprobsIsRefused() {
        EngineFixture f = new EngineFixture(
                EngineFixture.config().maxLogprobs(4).build(), LatencyModel.DEFAULT, TextMode.RANDOM, dir);
        assertThatThrownBy(() ->
                        f.submit(null, prompt(5), SamplingParams.fixedLength(3).withLogprobs(5, null)))
                .isInstanceOf(RequestRejectedException.class)
                .hasMessageContaining("logprobs of 5");
        assertThatThrownBy(() ->
                        f.submit(null, prompt(5), SamplingParams.fixedLength(3).withLogprobs(null, 5)))
                .isInstanceOf(RequestRejectedException.class)
                .hasMessageContaining("prompt_logprobs of 5");
    }
}
