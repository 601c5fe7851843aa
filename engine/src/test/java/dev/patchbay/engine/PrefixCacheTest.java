package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import dev.patchbay.engine.stats.EngineSnapshot;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrefixCacheTest {
    @TempDir
    Path dir;

    private EngineFixture fixture(int blocks) {
        return new EngineFixture(
                EngineFixture.config()
                        .enablePrefixCaching(true)
                        .blockSize(8)
                        .numKvBlocks(blocks)
                        .maxLoras(2)
                        .maxCpuLoras(2)
                        .build(),
                LatencyModel.DEFAULT,
                TextMode.ECHO,
                dir);
    }

    private static int[] prompt(int length, int salt) {
        int[] p = new int[length];
        for (int i = 0; i < length; i++) p[i] = 260 + (i * 7 + salt) % 100;
        return p;
    }

    private static int[] output(EngineFixture f, long id) {
        return f.outputs.get(id).stream()
                .flatMapToInt(o -> Arrays.stream(o.newTokenIds()))
                .toArray();
    }

    @Test
    void aRepeatedPromptReusesItsFullBlocks() throws Exception {
        EngineFixture f = fixture(64);
        int[] p = prompt(40, 1);
        long first = f.submit(null, p, SamplingParams.greedy(4));
        f.driver.runToCompletion();
        long second = f.submit(null, p, SamplingParams.greedy(4));
        f.step();
        // 39 of 40 tokens could come from the cache; whole blocks only: 4 blocks = 32 tokens, 8 left to compute.
        assertThat(f.latest().lastStep().scheduledTokens()).isEqualTo(8);
        f.driver.runToCompletion();
        EngineSnapshot s = f.latest();
        assertThat(s.counters().prefixCache().queries()).isEqualTo(80);
        assertThat(s.counters().prefixCache().hits()).isEqualTo(32);
        assertThat(output(f, second)).containsExactly(output(f, first));
        assertThat(s.kvBlocksUsed()).isZero();
    }

    @Test
    void anotherAdapterNeverSharesBlocks() throws Exception {
        EngineFixture f = fixture(64);
        f.load("a");
        f.load("b");
        int[] p = prompt(40, 2);
        f.submit("a", p, SamplingParams.greedy(2));
        f.driver.runToCompletion();
        f.submit("b", p, SamplingParams.greedy(2));
        f.driver.runToCompletion();
        assertThat(f.latest().counters().prefixCache().hits()).isZero();
        f.submit("a", p, SamplingParams.greedy(2));
        f.driver.runToCompletion();
        assertThat(f.latest().counters().prefixCache().hits()).isEqualTo(32);
    }

    @Test
    void runningRequestsShareBlocksAndCachedBlocksAreReusedWhenSpaceRunsOut() throws Exception {
        EngineFixture f = fixture(12);
        int[] p = prompt(33, 3);
        long a = f.submit(null, p, SamplingParams.fixedLength(6));
        f.step();
        f.step();
        long b = f.submit(null, p, SamplingParams.fixedLength(6));
        f.step();
        // b shares a's four full prompt blocks while both run.
        assertThat(f.latest().counters().prefixCache().hits()).isEqualTo(32);
        assertThat(f.latest().kvBlocksUsed()).isEqualTo(5 + 1); // a's five blocks, and b's own last one
        f.driver.runToCompletion();
        assertThat(output(f, b)).containsExactly(output(f, a));
        // Fill the cache with other prompts: the old blocks get handed out again and stop matching.
        for (int salt = 10; salt < 14; salt++) f.submit(null, prompt(80, salt), SamplingParams.fixedLength(2));
        f.driver.runToCompletion();
        long before = f.latest().counters().prefixCache().hits();
        f.submit(null, p, SamplingParams.fixedLength(2));
        f.driver.runToCompletion();
        assertThat(f.latest().counters().prefixCache().hits()).isEqualTo(before);
        assertThat(f.latest().kvBlocksUsed()).isZero();
    }
}
