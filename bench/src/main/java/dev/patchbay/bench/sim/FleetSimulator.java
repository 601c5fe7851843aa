package dev.patchbay.bench.sim;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.EngineRequest;
import dev.patchbay.engine.RequestRejectedException;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.clock.VirtualClock;
import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor;
import dev.patchbay.engine.stats.Counters;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.PickResult;
import dev.patchbay.router.pick.ProfileSettings;
import dev.patchbay.router.pick.Profiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.function.DoubleConsumer;

/**
 * N replicas of the real engine (scheduler, KV cache, adapter tiers; simulated executor) behind the real
 * router picker, on one virtual clock. Each replica runs one step at a time: it begins a step when the clock
 * is at its free time and finishes it exactly at start + modeled time. The router sees each replica as of
 * its last scrape, every {@code scrapeNanos}.
 */
public final class FleetSimulator implements AutoCloseable {
    private static final int ADAPTER_RANK = 8;

    private final SimSettings settings;
    private final Path adapterDir;

    public FleetSimulator(SimSettings settings) {
        this.settings = settings;
        try {
            // One adapter on storage serves every name: the simulated executor never reads the weights.
            adapterDir = Files.createTempDirectory("patchbay-fleet-");
            PeftWriter.write(adapterDir.resolve("lora"), SimModel.DEFAULT_CONFIG, "sim", ADAPTER_RANK, 16,
                    List.of("q_proj"), 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public SimSettings settings() {
        return settings;
    }

    /** Runs one policy over {@code trace}; {@code progress} gets the share of arrival time simulated so far. */
    public RunResult run(String policy, ProfileSettings profileSettings, Trace trace, double rate, long seed,
                         DoubleConsumer progress) {
        long wallStart = System.nanoTime();
        VirtualClock clock = new VirtualClock();
        List<Replica> replicas = startReplicas(clock, seed);
        EndpointPicker picker = Profiles.create(policy, profileSettings, new Random(seed));
        SnapshotScrape.View view = SnapshotScrape.viewFor(policy);
        RequestLedger ledger = new RequestLedger(trace, clock);
        Run run = new Run(replicas, picker, view, trace, ledger, clock);
        run.loop(progress);
        return summarize(policy, rate, trace, ledger, replicas, run.lastEndNanos, (System.nanoTime() - wallStart) / 1e9);
    }

    private List<Replica> startReplicas(VirtualClock clock, long seed) {
        Workload w = settings.workload();
        List<Replica> replicas = new ArrayList<>(w.replicas());
        Path lora = adapterDir.resolve("lora");
        for (int i = 0; i < w.replicas(); i++) {
            EngineConfig config = EngineConfig.builder("sim").enableLora(true).maxLoras(w.maxLoras())
                    .maxCpuLoras(w.maxCpuLoras()).maxLoraRank(16).maxNumSeqs(settings.maxNumSeqs())
                    .numKvBlocks(settings.numKvBlocks()).maxModelLen(settings.maxModelLen()).seed(seed + i).build();
            SimModel model = new SimModel("sim", SimModel.DEFAULT_CONFIG, settings.latency(),
                    SimulatedExecutor.TextMode.RANDOM, 0.0);
            // On a virtual clock the engine loads adapters inline, so it needs no loader pool and no wakeup.
            EngineCore core = new EngineCore(config, model, clock, null, () -> {});
            for (String name : w.adapters()) {
                try {
                    core.loadAdapter(name, lora, false, false);
                } catch (AdapterException e) {
                    throw new IllegalStateException("cannot register adapter " + name + ": " + e.getMessage(), e);
                }
            }
            replicas.add(new Replica(i, core));
        }
        return replicas;
    }

    /** The mutable state of one run and its event loop. */
    private final class Run {
        private final List<Replica> replicas;
        private final EndpointPicker picker;
        private final SnapshotScrape.View view;
        private final Trace trace;
        private final RequestLedger ledger;
        private final VirtualClock clock;
        private final java.util.Map<dev.patchbay.router.pick.Endpoint, Replica> byEndpoint = new java.util.HashMap<>();
        private final int[][] prompts = new int[settings.maxModelLen()][];
        private List<EndpointState> view0 = List.of();
        private long lastEndNanos;

        Run(List<Replica> replicas, EndpointPicker picker, SnapshotScrape.View view, Trace trace,
            RequestLedger ledger, VirtualClock clock) {
            this.replicas = replicas;
            this.picker = picker;
            this.view = view;
            this.trace = trace;
            this.ledger = ledger;
            this.clock = clock;
            for (Replica r : replicas) byEndpoint.put(r.endpoint, r);
        }

        void loop(DoubleConsumer progress) {
            long stopAt = settings.durationNanos() + settings.drainNanos();
            long nextScrape = 0;
            int next = 0;
            int n = trace.size();
            long progressStep = Math.max(1, settings.durationNanos() / 10), nextProgress = progressStep;
            while (true) {
                long now = clock.nanos();
                long arrival = next < n ? trace.arrivalNanos()[next] : Long.MAX_VALUE;
                long replicaEvent = Long.MAX_VALUE;
                boolean busy = false;
                for (Replica r : replicas) {
                    replicaEvent = Math.min(replicaEvent, r.nextEventNanos(now));
                    busy |= r.pending != null || r.core.hasRequests();
                }
                if (arrival == Long.MAX_VALUE && !busy) break;
                if (arrival == Long.MAX_VALUE && replicaEvent == Long.MAX_VALUE) break; // nothing can move: stalled
                long t = Math.min(Math.min(arrival, replicaEvent), nextScrape);
                if (t > stopAt) break;
                clock.advanceTo(Math.max(t, now));
                t = clock.nanos();
                while (t >= nextProgress && nextProgress <= settings.durationNanos()) {
                    progress.accept((double) nextProgress / settings.durationNanos());
                    nextProgress += progressStep;
                }
                for (Replica r : replicas) {
                    if (r.pending != null && r.pendingEndNanos == t) finish(r, t);
                }
                if (t == nextScrape) {
                    scrape();
                    nextScrape += settings.scrapeNanos();
                }
                while (next < n && trace.arrivalNanos()[next] == t) route(next++);
                for (Replica r : replicas) {
                    if (r.pending == null && (r.wantsStep || r.wakeAtNanos <= t)) begin(r, t);
                }
            }
        }

        private void finish(Replica r, long t) {
            r.core.finishStep(r.pending, t);
            r.pending = null;
            r.wantsStep = true;
            lastEndNanos = Math.max(lastEndNanos, t);
        }

        private void begin(Replica r, long t) {
            r.wantsStep = false;
            EngineCore.PendingStep step = r.core.beginStep();
            // A step modeled as free (a zero-cost latency model) ends at once; run the next one right away.
            while (step != null && step.modeledNanos() == 0) {
                r.core.finishStep(step, t);
                lastEndNanos = Math.max(lastEndNanos, t);
                step = r.core.beginStep();
            }
            if (step != null) {
                r.pending = step;
                r.pendingEndNanos = t + step.modeledNanos();
                r.wakeAtNanos = Long.MAX_VALUE;
            } else {
                r.wakeAtNanos = r.core.nextTimedEventNanos();
            }
        }

        private void scrape() {
            List<EndpointState> states = new ArrayList<>(replicas.size());
            for (Replica r : replicas) states.add(r.scrape(view));
            view0 = states;
        }

        private void route(int i) {
            String adapter = settings.workload().adapters().get(trace.adapter()[i]);
            PickResult pick = picker.pick(PickRequest.adapter(adapter), view0);
            if (pick.outcome() != PickResult.Outcome.PICKED) {
                ledger.refused(i);
                return;
            }
            Replica r = byEndpoint.get(pick.best().endpoint());
            EngineRequest req = new EngineRequest(prompt(trace.promptTokens()[i]), adapter,
                    SamplingParams.fixedLength(trace.outputTokens()[i]), clock.nanos(), ledger.sent(i));
            try {
                r.core.submit(req);
                r.wantsStep = true;
            } catch (RequestRejectedException e) {
                ledger.refused(i);
            }
        }

        /** Prompt contents do not matter to the simulated executor; the engine copies them, so share by length. */
        private int[] prompt(int length) {
            int[] p = prompts[length];
            if (p == null) {
                p = new int[length];
                Arrays.fill(p, 100);
                prompts[length] = p;
            }
            return p;
        }
    }

    private RunResult summarize(String policy, double rate, Trace trace, RequestLedger ledger, List<Replica> replicas,
                                long lastEndNanos, double wallSeconds) {
        int n = ledger.size();
        double[] ttft = new double[n], e2e = new double[n];
        int ttftCount = 0, e2eCount = 0, completed = 0, failed = 0, unfinished = 0;
        long tokens = 0;
        long end = Math.max(lastEndNanos, settings.durationNanos());
        for (int i = 0; i < n; i++) {
            tokens += ledger.outputTokens(i);
            switch (ledger.fate(i)) {
                case COMPLETED -> {
                    completed++;
                    e2e[e2eCount++] = (ledger.finishNanos(i) - ledger.arrivalNanos(i)) / 1e9;
                }
                case REFUSED, FAILED -> failed++;
                case IN_FLIGHT, NOT_SENT -> unfinished++;
            }
            if (ledger.firstTokenNanos(i) >= 0) {
                ttft[ttftCount++] = (ledger.firstTokenNanos(i) - ledger.arrivalNanos(i)) / 1e9;
            } else if (ledger.fate(i) == RequestLedger.Fate.IN_FLIGHT || ledger.fate(i) == RequestLedger.Fate.NOT_SENT) {
                ttft[ttftCount++] = Math.max(0, end - ledger.arrivalNanos(i)) / 1e9;
            }
        }
        long fromStorage = 0, intoSlots = 0, evictions = 0, lookups = 0, hits = 0;
        for (Replica r : replicas) {
            Counters c = r.core.snapshot().counters();
            fromStorage += c.loraLoadsFromDisk();
            intoSlots += c.loraLoadsFromCpu();
            evictions += c.loraEvictionsGpu();
            lookups += c.loraLookupsGpu();
            hits += c.loraHitsGpu();
        }
        Percentiles t = new Percentiles(ttft, ttftCount);
        Percentiles e = new Percentiles(e2e, e2eCount);
        return new RunResult(settings.workload().name(), policy, rate, n, completed, failed, unfinished,
                t.at(50), t.at(90), t.at(99), e.at(99), tokens / (end / 1e9), fromStorage, intoSlots, evictions,
                lookups == 0 ? Double.NaN : (double) hits / lookups, end / 1e9, wallSeconds);
    }

    @Override
    public void close() {
        try (var files = Files.walk(adapterDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // A temp directory left behind is harmless.
        }
    }
}
