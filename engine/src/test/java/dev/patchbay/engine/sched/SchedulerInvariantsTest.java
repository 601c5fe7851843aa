package dev.patchbay.engine.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.EngineRequest;
import dev.patchbay.engine.RequestOutput;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.clock.VirtualClock;
import dev.patchbay.engine.kv.KvCacheManager.CachedPrefix;
import dev.patchbay.engine.kv.SequenceBlocks;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import dev.patchbay.engine.sim.VirtualEngineDriver;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checker passes an honest engine and names each invariant a corrupted state or plan breaks. */
class SchedulerInvariantsTest {
    private static final String MODEL = "sim-test";

    @TempDir
    Path dir;

    private final VirtualClock clock = new VirtualClock();

    private static EngineConfig.Builder config() {
        return EngineConfig.builder(MODEL)
                .enableLora(true)
                .maxLoras(1)
                .maxCpuLoras(2)
                .numKvBlocks(64)
                .blockSize(8);
    }

    private EngineCore core(EngineConfig config) {
        SimModel model = new SimModel(MODEL, SimModel.DEFAULT_CONFIG, LatencyModel.DEFAULT, TextMode.RANDOM, 0.0);
        return new EngineCore(config, model, clock, ForkJoinPool.commonPool(), () -> {});
    }

    private long submit(EngineCore core, String adapter, int promptTokens, int maxTokens, AtomicInteger finished)
            throws Exception {
        int[] prompt = new int[promptTokens];
        for (int i = 0; i < promptTokens; i++) prompt[i] = 300 + i % 40;
        return core.submit(new EngineRequest(
                prompt, adapter, SamplingParams.fixedLength(maxTokens), clock.nanos(), (RequestOutput out) -> {
                    if (out.finished()) finished.incrementAndGet();
                }));
    }

    private RegisteredAdapter register(EngineCore core, String name) throws Exception {
        Path path = PeftWriter.write(dir.resolve(name), SimModel.DEFAULT_CONFIG, MODEL, 8, 16, List.of("q_proj"), 1);
        return core.loadAdapter(name, path, false, false).get();
    }

    private static Scheduler.Plan emptyPlan() {
        return new Scheduler.Plan(List.of(), List.of(), Set.of(), 0);
    }

    @Test
    void anHonestEngineKeepsEveryInvariantThroughPreemptionsAndAdapterSwaps() throws Exception {
        // 24 blocks of 8 tokens for up to 8 sequences of up to 90 tokens: preemptions are certain.
        EngineCore core = core(config().maxLoras(2)
                .maxCpuLoras(3)
                .numKvBlocks(24)
                .maxNumSeqs(8)
                .maxNumBatchedTokens(64)
                .build());
        SchedulerInvariants checker = SchedulerInvariants.attach(core);
        for (String n : List.of("a", "b", "c", "d")) register(core, n);
        VirtualEngineDriver driver = new VirtualEngineDriver(core, clock);
        SplittableRandom rnd = new SplittableRandom(5);
        AtomicInteger finished = new AtomicInteger();
        for (int i = 0; i < 60; i++) {
            String adapter =
                    rnd.nextInt(4) == 0 ? null : List.of("a", "b", "c", "d").get(rnd.nextInt(4));
            int prompt = 1 + rnd.nextInt(60);
            int output = 1 + rnd.nextInt(30);
            driver.at(i * 3_000_000L, () -> {
                try {
                    submit(core, adapter, prompt, output, finished);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
        }
        driver.runToCompletion();
        assertThat(finished.get()).isEqualTo(60);
        assertThat(core.snapshot().counters().preemptions()).as("preemptions").isPositive();
        assertThat(core.snapshot().counters().lora().evictions().gpu())
                .as("slot evictions")
                .isPositive();
        assertThat(checker.steps()).isGreaterThan(100);
    }

    @Test
    void aStepAfterABlockLeakedFailsNamingTheBlocks() throws Exception {
        EngineCore core = core(config().build());
        SchedulerInvariants.attach(core);
        submit(core, null, 20, 4, new AtomicInteger());
        core.runStep();
        // A block handed out to no request: the cache counts one more block in use than the requests hold.
        core.kvCache().allocateSlots(new SequenceBlocks(i -> 0, 0), CachedPrefix.NONE, 1);
        assertThatThrownBy(core::beginStep)
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("3 blocks held by running requests but 4 in use");
    }

    @Test
    void aRequestBothRunningAndWaitingIsNamed() throws Exception {
        EngineCore core = core(config().build());
        SchedulerInvariants checker = SchedulerInvariants.collecting(core);
        long id = submit(core, null, 8, 4, new AtomicInteger());
        core.runStep();
        assertThat(checker.check(emptyPlan())).isEmpty();
        Scheduler scheduler = core.scheduler();
        scheduler.waiting.addLast(scheduler.running.get(0));
        assertThat(checker.check(emptyPlan())).contains("request " + id + " is both running and waiting");
    }

    @Test
    void aDeferredCountOffTheMarkedRequestsIsNamed() throws Exception {
        EngineCore core = core(config().maxNumSeqs(1).build());
        SchedulerInvariants checker = SchedulerInvariants.collecting(core);
        submit(core, null, 8, 4, new AtomicInteger());
        long id = submit(core, null, 8, 4, new AtomicInteger());
        core.runStep();
        assertThat(checker.check(emptyPlan())).isEmpty();
        // A request leaving the queue without leaving the count is what this catches: the same mismatch.
        core.scheduler().waiting.peekFirst().deferred = true;
        assertThat(checker.check(emptyPlan())).contains("0 requests counted deferred but 1 waiting ones are marked");
        core.scheduler().waiting.peekFirst().deferred = false;
        core.scheduler().running.get(0).deferred = true;
        assertThat(checker.check(emptyPlan()))
                .anySatisfy(m -> assertThat(m).contains("is marked deferred").doesNotContain("request " + id));
    }

    @Test
    void aPlanOverTheTokenBudgetIsNamed() throws Exception {
        EngineCore core = core(config().maxNumBatchedTokens(16).build());
        SchedulerInvariants checker = SchedulerInvariants.collecting(core);
        submit(core, null, 40, 4, new AtomicInteger());
        submit(core, null, 40, 4, new AtomicInteger());
        Scheduler scheduler = core.scheduler();
        while (scheduler.running.size() < 2) core.runStep();
        // The first request decodes, the second has 32 prompt tokens left: 1 + 16 tokens is one over the budget.
        Request decoding = scheduler.running.get(0);
        Request prefilling = scheduler.running.get(1);
        List<String> broken = checker.check(new Scheduler.Plan(
                List.of(new Scheduler.Scheduled(decoding, 1), new Scheduler.Scheduled(prefilling, 16)),
                List.of(),
                Set.of(),
                0));
        assertThat(broken).contains("the step schedules 17 tokens, over the token budget 16");
    }

    @Test
    void moreRunningRequestsThanMaxNumSeqsAreNamed() throws Exception {
        EngineCore core = core(config().maxNumSeqs(2).build());
        SchedulerInvariants checker = SchedulerInvariants.collecting(core);
        for (int i = 0; i < 3; i++) submit(core, null, 4, 8, new AtomicInteger());
        core.runStep();
        Scheduler scheduler = core.scheduler();
        assertThat(scheduler.waiting).hasSize(1);
        Request third = scheduler.waiting.pollFirst();
        third.status = Request.Status.RUNNING;
        scheduler.running.add(third);
        assertThat(checker.check(emptyPlan())).contains("3 requests running, over max_num_seqs 2");
    }

    @Test
    void aStepWithMoreAdaptersThanMaxLorasIsNamed() throws Exception {
        EngineCore core = core(config().maxLoras(1).build());
        SchedulerInvariants checker = SchedulerInvariants.collecting(core);
        RegisteredAdapter a = register(core, "a");
        RegisteredAdapter b = register(core, "b");
        assertThat(checker.check(new Scheduler.Plan(List.of(), List.of(), Set.of(a), 0)))
                .isEmpty();
        assertThat(checker.check(new Scheduler.Plan(List.of(), List.of(), Set.of(a, b), 0)))
                .contains("the step uses 2 adapters, over max_loras 1");
    }

    @Test
    void collectedViolationsFailAssertHeld() throws Exception {
        EngineCore core = core(config().build());
        SchedulerInvariants checker = SchedulerInvariants.collecting(core);
        submit(core, null, 20, 4, new AtomicInteger());
        core.runStep();
        checker.assertHeld();
        core.kvCache().allocateSlots(new SequenceBlocks(i -> 0, 0), CachedPrefix.NONE, 1);
        core.runStep();
        assertThatThrownBy(checker::assertHeld)
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("blocks held by running requests but");
    }
}
