package dev.patchbay.bench.jmh;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.EngineRequest;
import dev.patchbay.engine.RequestListener;
import dev.patchbay.engine.RequestOutput;
import dev.patchbay.engine.RequestRejectedException;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.clock.VirtualClock;
import dev.patchbay.engine.model.ModelConfig;
import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimTokenizer;
import dev.patchbay.engine.sim.SimulatedExecutor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One engine step (commands, scheduling, batch building, output delivery, snapshot) with 256 running
 * sequences over 64 adapters, on a zero-cost executor so only the engine's own work is measured. Finished
 * requests are replaced at once, so the running set stays full.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class SchedulerStepBenchmark {
    @Param({"256"})
    int sequences;

    @Param({"64"})
    int adapters;

    private EngineCore core;
    private VirtualClock clock;
    private final int[] prompt = new int[64];

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        ModelConfig tiny = new ModelConfig(
                "SimForCausalLM",
                64,
                2,
                4,
                2,
                16,
                128,
                new SimTokenizer().vocabSize(),
                1 << 20,
                1e-5,
                10000,
                false,
                false,
                "float16",
                null);
        SimModel model = new SimModel("bench", tiny, LatencyModel.ZERO, SimulatedExecutor.TextMode.RANDOM, 0);
        EngineConfig config = EngineConfig.builder("bench")
                .enableLora(true)
                .maxLoras(adapters)
                .maxCpuLoras(adapters)
                .maxNumSeqs(sequences)
                .maxNumBatchedTokens(8192)
                .numKvBlocks(sequences * 72)
                .maxModelLen(4096)
                .build();
        clock = new VirtualClock();
        core = new EngineCore(config, model, clock, ForkJoinPool.commonPool(), () -> {});
        Path dir = Files.createTempDirectory("patchbay-bench-adapters");
        for (int i = 0; i < adapters; i++) {
            PeftWriter.write(dir.resolve("a" + i), tiny, "bench", 8, 16, List.of("q_proj", "v_proj"), i);
            core.loadAdapter("a" + i, dir.resolve("a" + i), false, true);
        }
        for (int i = 0; i < prompt.length; i++) prompt[i] = 300 + i;
        for (int i = 0; i < sequences; i++) submit(i);
        // Admit everyone and get past the prefills.
        for (int i = 0; i < 200; i++) core.runStep();
        if (core.snapshot().numRunning() != sequences) {
            throw new IllegalStateException(
                    "expected " + sequences + " running, got " + core.snapshot().numRunning());
        }
    }

    private void submit(int i) throws RequestRejectedException {
        core.submit(new EngineRequest(
                prompt, "a" + (i % adapters), SamplingParams.fixedLength(1000), clock.nanos(), new RequestListener() {
                    @Override
                    public void onOutput(RequestOutput out) {
                        if (out.finished()) {
                            try {
                                submit(i);
                            } catch (RequestRejectedException e) {
                                throw new IllegalStateException(e);
                            }
                        }
                    }

                    @Override
                    public boolean wantsText() {
                        return false;
                    }
                }));
    }

    @Benchmark
    public boolean step() throws InterruptedException {
        clock.advance(1_000);
        return core.runStep();
    }
}
