package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.EngineSnapshot;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SchedulerTest {
    @TempDir
    Path dir;

    private EngineFixture fixture(EngineConfig.Builder b) {
        return new EngineFixture(b.build(), LatencyModel.DEFAULT, TextMode.RANDOM, dir);
    }

    private static AdapterState adapter(EngineSnapshot s, String name) {
        return s.lora().adapters().stream()
                .filter(a -> a.name().equals(name))
                .findFirst()
                .orElse(null);
    }

    @Test
    void maxLorasSkipsNewAdapterButKeepsItsPlaceAndAdmitsOthers() throws Exception {
        EngineFixture f = fixture(EngineFixture.config().maxLoras(1).maxCpuLoras(3));
        f.load("a");
        f.load("b");
        long a1 = f.submit("a", 8, 50);
        long b1 = f.submit("b", 8, 50);
        long a2 = f.submit("a", 8, 50);
        long base = f.submit(null, 8, 50);
        long b2 = f.submit("b", 8, 50);
        f.step();

        // b1 and b2 are skipped (the one slot holds "a"); a2 and the base request are admitted past them.
        assertThat(f.core.runningIds()).containsExactly(a1, a2, base);
        assertThat(f.core.waitingIds()).containsExactly(b1, b2);
        EngineSnapshot s = f.latest();
        assertThat(adapter(s, "a").running()).isEqualTo(2);
        assertThat(adapter(s, "b").waiting()).isEqualTo(2);
        assertThat(s.lora().slotsUsed()).isEqualTo(1);

        // A later request for "a" is admitted too, while "b" keeps its head position.
        long a3 = f.submit("a", 8, 50);
        long c = f.submit(null, 8, 50);
        f.step();
        assertThat(f.core.runningIds()).containsExactly(a1, a2, base, a3, c);
        assertThat(f.core.waitingIds()).containsExactly(b1, b2);

        // Once the "a" requests drain, "b" runs, head first.
        f.driver.runToCompletion();
        for (long id : new long[] {a1, a2, a3, b1, b2, base, c})
            assertThat(f.finished(id)).isTrue();
        assertThat(f.last(b1).outputTokens()).isEqualTo(50);
    }

    /**
     * Deferred requests are the waiting ones the last pass to reach them skipped for their adapter; the rest of the
     * queue waits for capacity. The count survives steps that do not look at the queue and drops with requests that
     * leave it (an abort), so it never exceeds the queue.
     */
    @Test
    void waitingRequestsSkippedForTheLoraBudgetAreDeferredTheRestWaitForCapacity() throws Exception {
        EngineFixture f =
                fixture(EngineFixture.config().maxLoras(1).maxCpuLoras(3).maxNumSeqs(3));
        f.load("a");
        f.load("b");
        long a1 = f.submit("a", 8, 20);
        long b1 = f.submit("b", 8, 20);
        long base1 = f.submit(null, 8, 20);
        long a2 = f.submit("a", 8, 20);
        long base2 = f.submit(null, 8, 20);
        f.step();

        // b1 is skipped (the one slot holds "a"); the pass ends at max_num_seqs before it reaches base2.
        assertThat(f.core.runningIds()).containsExactly(a1, base1, a2);
        assertThat(f.core.waitingIds()).containsExactly(b1, base2);
        assertThat(f.latest().numWaiting()).isEqualTo(2);
        assertThat(f.latest().numWaitingDeferred()).isEqualTo(1);

        // A step with max_num_seqs reached looks at no waiting request: b1 stays deferred.
        f.step();
        assertThat(f.latest().numWaitingDeferred()).isEqualTo(1);

        // Aborted while deferred, b1 leaves the count with the queue.
        f.core.abort(b1);
        f.step();
        assertThat(f.core.waitingIds()).containsExactly(base2);
        assertThat(f.latest().numWaiting()).isEqualTo(1);
        assertThat(f.latest().numWaitingDeferred()).isZero();

        f.driver.runToCompletion();

        // A request whose adapter is not yet in host memory is deferred while its load runs.
        f.register("c");
        long c = f.submit("c", 8, 5);
        f.step();
        assertThat(f.core.waitingIds()).containsExactly(c);
        assertThat(f.latest().numWaitingDeferred()).isEqualTo(1);

        f.driver.runToCompletion();
        for (long id : new long[] {a1, base1, a2, base2, c})
            assertThat(f.finished(id)).as("request " + id).isTrue();
        assertThat(f.latest().numWaiting()).isZero();
        assertThat(f.latest().numWaitingDeferred()).isZero();
        assertThat(f.snapshots)
                .allSatisfy(s -> assertThat(s.numWaitingDeferred()).isBetween(0, s.numWaiting()));
    }

    @Test
    void anAdapterWaitingForHostMemoryDoesNotKeepTheSlotsFromTheResidentOnes() throws Exception {
        // Host memory holds a and b, both with requests waiting; c, at the head of the queue, can only be loaded
        // once a or b has no request left. Were c's wanted load to hold the one slot, nothing would ever run.
        EngineFixture f = fixture(EngineFixture.config().maxLoras(1).maxCpuLoras(2));
        f.load("a");
        f.load("b");
        f.register("c");
        long c = f.submit("c", 8, 5);
        long a = f.submit("a", 8, 5);
        long b = f.submit("b", 8, 5);
        f.step();
        assertThat(f.core.runningIds()).containsExactly(a);
        f.driver.runToCompletion();
        for (long id : new long[] {a, b, c})
            assertThat(f.finished(id)).as("request " + id).isTrue();
        assertThat(f.last(c).outputTokens()).isEqualTo(5);
    }

    /**
     * A KV cache set smaller than max_model_len (4 blocks of 16 tokens against 8192) bounds the context: the server
     * refuses a request that asks for more (its max_tokens check is the context limit's), and one let in ends at the
     * cache's size. Run on, it would be preempted and recomputed for ever, since freeing every other request's
     * blocks still would not make room for it.
     */
    @Test
    void aRequestLongerThanTheWholeKvCacheIsRefusedNotPreemptedForEver() throws Exception {
        EngineFixture f =
                fixture(EngineFixture.config().numKvBlocks(4).blockSize(16).maxModelLen(8192));
        assertThat(f.core.contextLimit().maxModelLen()).isEqualTo(64);
        assertThatThrownBy(() -> f.core.contextLimit().maxTokens(40, 30))
                .isInstanceOf(RequestRejectedException.class)
                .hasMessageContaining("maximum context length is 64 tokens");
        assertThat(f.core.contextLimit().maxTokens(40, null)).isEqualTo(24);
        long tooLong = f.submit(null, 40, 30);
        f.driver.runToCompletion();
        assertThat(f.finished(tooLong)).isTrue();
        assertThat(f.last(tooLong).outputTokens()).isEqualTo(24);
        assertThat(f.last(tooLong).finishReason()).isEqualTo(FinishReason.LENGTH);
    }

    @Test
    void baseModelRequestsNeverTakeASlot() throws Exception {
        EngineFixture f = fixture(EngineFixture.config().maxLoras(1).maxCpuLoras(1));
        f.load("a");
        for (int i = 0; i < 5; i++) f.submit(null, 8, 5);
        long a = f.submit("a", 8, 5);
        f.step();
        assertThat(f.core.runningIds()).hasSize(6).contains(a);
        EngineSnapshot s = f.latest();
        assertThat(s.lora().slotsUsed()).isEqualTo(1);
        assertThat(s.lastStep().numAdapters()).isEqualTo(1);
    }

    @Test
    void twoSlotsAdmitTwoAdaptersPerStep() throws Exception {
        EngineFixture f = fixture(EngineFixture.config().maxLoras(2).maxCpuLoras(3));
        f.load("a");
        f.load("b");
        f.load("c");
        long a = f.submit("a", 4, 20);
        long b = f.submit("b", 4, 20);
        long c = f.submit("c", 4, 20);
        f.step();
        assertThat(f.core.runningIds()).containsExactly(a, b);
        assertThat(f.core.waitingIds()).containsExactly(c);
        assertThat(f.latest().lastStep().numAdapters()).isEqualTo(2);
    }

    @Test
    void tokenBudgetChunksLongPrompts() throws Exception {
        EngineFixture f = fixture(EngineFixture.config().enableLora(false).maxNumBatchedTokens(8));
        long id = f.submit(null, 20, 3);
        f.step();
        f.step();
        assertThat(f.tokens(id)).isZero(); // 16 of 20 prompt tokens computed
        assertThat(f.latest().lastStep().scheduledTokens()).isEqualTo(8);
        f.step();
        assertThat(f.tokens(id)).isEqualTo(1); // the last chunk completes the prompt and samples
        assertThat(f.latest().lastStep().scheduledTokens()).isEqualTo(4);
        assertThat(f.latest().lastStep().firstTokens()).hasSize(1);
    }

    @Test
    void budgetIsSharedBetweenRunningAndWaiting() throws Exception {
        EngineFixture f = fixture(EngineFixture.config().enableLora(false).maxNumBatchedTokens(10));
        long a = f.submit(null, 6, 5);
        long b = f.submit(null, 6, 5);
        f.step();
        // a takes 6 tokens, b gets the remaining 4 as a first chunk.
        assertThat(f.core.runningIds()).containsExactly(a, b);
        assertThat(f.latest().lastStep().scheduledTokens()).isEqualTo(10);
        assertThat(f.tokens(a)).isEqualTo(1);
        assertThat(f.tokens(b)).isZero();
    }

    @Test
    void maxNumSeqsBoundsTheRunningSet() throws Exception {
        EngineFixture f = fixture(EngineFixture.config().enableLora(false).maxNumSeqs(2));
        long a = f.submit(null, 4, 3);
        long b = f.submit(null, 4, 3);
        long c = f.submit(null, 4, 3);
        f.step();
        assertThat(f.core.runningIds()).containsExactly(a, b);
        assertThat(f.core.waitingIds()).containsExactly(c);
        assertThat(f.latest().numRunning()).isEqualTo(2);
        assertThat(f.latest().numWaiting()).isEqualTo(1);
        f.driver.runToCompletion();
        assertThat(f.finished(c)).isTrue();
    }

    @Test
    void preemptsNewestRunningRequestAndRecomputesIt() throws Exception {
        // 6 blocks of 4 tokens: two sequences growing to 16 tokens each cannot both fit.
        EngineFixture f = new EngineFixture(
                EngineFixture.config()
                        .enableLora(false)
                        .numKvBlocks(6)
                        .blockSize(4)
                        .build(),
                LatencyModel.DEFAULT,
                TextMode.ECHO,
                dir);
        int[] promptA = {300, 301, 302, 303, 304, 305, 306, 307};
        int[] promptB = {310, 311, 312, 313, 314, 315, 316, 317};
        long a = f.submit(null, promptA, SamplingParams.fixedLength(8));
        long b = f.submit(null, promptB, SamplingParams.fixedLength(8));
        f.driver.runToCompletion();

        assertThat(f.latest().counters().preemptions()).isPositive();
        // Echo mode: recompute must not change the output.
        assertThat(tokens(f, a)).containsExactly(promptA);
        assertThat(tokens(f, b)).containsExactly(promptB);
        assertThat(f.last(a).finishReason()).isEqualTo(FinishReason.LENGTH);
        assertThat(f.core.freeKvBlocks()).isEqualTo(6);
        // The newest request (b) is the one preempted; a never waits again after starting.
        assertThat(f.snapshots.stream()
                        .filter(s -> s.numWaiting() > 0 && s.numRunning() == 1)
                        .count())
                .isPositive();
    }

    @Test
    void preemptedRequestReturnsToHeadOfQueue() throws Exception {
        EngineFixture f = new EngineFixture(
                EngineFixture.config()
                        .enableLora(false)
                        .numKvBlocks(5)
                        .blockSize(4)
                        .maxNumSeqs(2)
                        .build(),
                LatencyModel.DEFAULT,
                TextMode.RANDOM,
                dir);
        long a = f.submit(null, 8, 12);
        long b = f.submit(null, 8, 12);
        long c = f.submit(null, 4, 2);
        for (int i = 0; i < 12 && f.latest().counters().preemptions() == 0; i++) f.step();
        assertThat(f.latest().counters().preemptions()).isEqualTo(1);
        assertThat(f.core.waitingIds()).startsWith(b).contains(c);
        assertThat(f.core.runningIds()).containsExactly(a);
    }

    private static int[] tokens(EngineFixture f, long id) {
        return f.outputs.get(id).stream()
                .flatMapToInt(o -> Arrays.stream(o.newTokenIds()))
                .toArray();
    }
}
