package dev.patchbay.engine;

import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.clock.VirtualClock;
import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.engine.sched.SchedulerInvariants;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor;
import dev.patchbay.engine.sim.VirtualEngineDriver;
import dev.patchbay.engine.stats.EngineSnapshot;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;

/**
 * One engine on a virtual clock with the simulated model, plus helpers to submit and inspect. Every step it runs is
 * checked against the scheduler's invariants; the step that breaks one fails the test.
 */
final class EngineFixture {
    static final String MODEL = "sim-test";

    final VirtualClock clock = new VirtualClock();
    final SimModel model;
    final EngineCore core;
    final VirtualEngineDriver driver;
    final SchedulerInvariants schedulerInvariants;
    final Path adapterRoot;
    final List<EngineSnapshot> snapshots = new CopyOnWriteArrayList<>();
    final ConcurrentHashMap<Long, List<RequestOutput>> outputs = new ConcurrentHashMap<>();
    /** Engine time at which each request's final output was delivered. */
    final ConcurrentHashMap<Long, Long> finishNanos = new ConcurrentHashMap<>();

    EngineFixture(EngineConfig config, LatencyModel latency, SimulatedExecutor.TextMode mode, Path adapterRoot) {
        this.model = new SimModel(MODEL, SimModel.DEFAULT_CONFIG, latency, mode, 0.0);
        this.core = new EngineCore(config, model, clock, ForkJoinPool.commonPool(), () -> {});
        this.driver = new VirtualEngineDriver(core, clock);
        this.schedulerInvariants = SchedulerInvariants.attach(core);
        this.adapterRoot = adapterRoot;
        core.addListener(snapshots::add);
    }

    static EngineConfig.Builder config() {
        return EngineConfig.builder(MODEL)
                .enableLora(true)
                .maxLoras(2)
                .maxCpuLoras(4)
                .numKvBlocks(1024)
                .seed(7);
    }

    /** Writes a small rank-8 adapter on q_proj and v_proj. */
    static Path writeAdapter(Path root, String name, long seed) throws IOException {
        return PeftWriter.write(
                root.resolve(name), SimModel.DEFAULT_CONFIG, MODEL, 8, 16, List.of("q_proj", "v_proj"), seed);
    }

    /** Registers an adapter (written under the fixture's root) and makes it host-resident. */
    void load(String name) throws Exception {
        var future = core.loadAdapter(name, writeAdapter(adapterRoot, name, name.hashCode()), false, true);
        for (int i = 0; i < 600 && !future.isDone(); i++) driver.runUntil(clock.nanos() + 100_000_000L);
        future.get(1, TimeUnit.SECONDS);
    }

    void register(String name) throws Exception {
        core.loadAdapter(name, writeAdapter(adapterRoot, name, name.hashCode()), false, false)
                .get();
    }

    long submit(String adapter, int promptTokens, int maxTokens) throws RequestRejectedException {
        int[] prompt = new int[promptTokens];
        for (int i = 0; i < promptTokens; i++) prompt[i] = 300 + i % 50;
        return submit(adapter, prompt, SamplingParams.fixedLength(maxTokens));
    }

    long submit(String adapter, int[] prompt, SamplingParams params) throws RequestRejectedException {
        List<RequestOutput> sink = new ArrayList<>();
        long id = core.submit(new EngineRequest(prompt, adapter, params, clock.nanos(), out -> {
            synchronized (sink) {
                sink.add(out);
            }
            if (out.finished()) finishNanos.put(out.requestId(), clock.nanos());
        }));
        outputs.put(id, sink);
        return id;
    }

    /** Runs exactly one engine step (applying commands first). */
    void step() throws InterruptedException {
        core.runStep();
    }

    RequestOutput last(long id) {
        List<RequestOutput> l = outputs.get(id);
        return l.isEmpty() ? null : l.get(l.size() - 1);
    }

    boolean finished(long id) {
        RequestOutput o = last(id);
        return o != null && o.finished();
    }

    int tokens(long id) {
        return outputs.get(id).stream().mapToInt(o -> o.newTokenIds().length).sum();
    }

    EngineSnapshot latest() {
        return core.snapshot();
    }
}
