package dev.patchbay.bench.sim;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.EngineRequest;
import dev.patchbay.engine.RequestListener;
import dev.patchbay.engine.RequestOutput;
import dev.patchbay.engine.RequestRejectedException;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.clock.VirtualClock;
import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.PickResult;
import dev.patchbay.router.pick.ProfileSettings;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.pool.PromptInFlight;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
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
        EndpointPicker picker = Profiles.create(policy, profileSettings, new Random(seed), clock::nanos);
        SnapshotScrape.View view = SnapshotScrape.viewFor(policy);
        RequestLedger ledger = new RequestLedger(trace, clock);
        Run run = new Run(replicas, picker, view, trace, ledger, clock);
        run.loop(progress);
        return RunSummary.of(settings, policy, rate, ledger, replicas, run.sentTo, run.lastEndNanos,
                (System.nanoTime() - wallStart) / 1e9);
    }

    private List<Replica> startReplicas(VirtualClock clock, long seed) {
        Workload w = settings.workload();
        List<Replica> replicas = new ArrayList<>(w.replicas());
        for (int i = 0; i < w.replicas(); i++) {
            EngineConfig config = EngineConfig.builder("sim").enableLora(true).maxLoras(w.maxLoras())
                    .maxCpuLoras(w.maxCpuLoras()).maxLoraRank(16).maxNumSeqs(settings.maxNumSeqs())
                    .numKvBlocks(settings.numKvBlocks()).maxModelLen(settings.maxModelLen()).seed(seed + i).build();
            SimModel model = new SimModel("sim", SimModel.DEFAULT_CONFIG, settings.latency(),
                    SimulatedExecutor.TextMode.RANDOM, 0.0);
            // On a virtual clock the engine loads adapters inline, so it needs no loader pool and no wakeup.
            EngineCore core = new EngineCore(config, model, clock, null, () -> {});
            replicas.add(new Replica(i, core, w.adapters().size()));
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
        private final Map<Endpoint, Replica> byEndpoint = new HashMap<>();
        private final int[][] prompts = new int[settings.maxModelLen()][];
        /** Every replica as of the last scrape, in replica order, plus the picks since if the picker counts them. */
        private List<EndpointState> routerView = new ArrayList<>();
        private long lastEndNanos;
        private final int[] sentTo;
        /** The router's tally per replica: prompt tokens sent and not yet answered with a first token. */
        private final AtomicLong[] promptTokensInFlight;

        Run(List<Replica> replicas, EndpointPicker picker, SnapshotScrape.View view, Trace trace,
            RequestLedger ledger, VirtualClock clock) {
            this.replicas = replicas;
            this.picker = picker;
            this.view = view;
            this.trace = trace;
            this.ledger = ledger;
            this.clock = clock;
            for (Replica r : replicas) byEndpoint.put(r.endpoint, r);
            sentTo = new int[replicas.size()];
            promptTokensInFlight = new AtomicLong[replicas.size()];
            Arrays.setAll(promptTokensInFlight, k -> new AtomicLong());
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
            routerView = states;
        }

        private void route(int i) {
            String adapter = settings.workload().adapters().get(trace.adapter()[i]);
            PickResult pick = picker.pick(PickRequest.adapter(adapter), candidates());
            if (pick.outcome() != PickResult.Outcome.PICKED) {
                ledger.refused(i);
                return;
            }
            Replica r = byEndpoint.get(pick.best().endpoint());
            sentTo[r.index]++;
            if (picker.countsOwnPicks()) {
                EndpointState seen = routerView.get(r.index);
                routerView.set(r.index, new EndpointState(seen.endpoint(), seen.metrics().withRequestSent(adapter)));
            }
            register(r, trace.adapter()[i], adapter);
            int promptTokens = trace.promptTokens()[i];
            PromptInFlight inFlight = new PromptInFlight(promptTokensInFlight[r.index], promptTokens);
            EngineRequest req = new EngineRequest(prompt(promptTokens), adapter,
                    SamplingParams.fixedLength(trace.outputTokens()[i]), clock.nanos(),
                    new FirstAnswer(ledger.sent(i), inFlight));
            try {
                r.core.submit(req);
                r.wantsStep = true;
            } catch (RequestRejectedException e) {
                inFlight.answered();
                ledger.refused(i);
            }
        }

        /** The router's view with its prompt tally, as the real router's pool hands it to the picker. */
        private List<EndpointState> candidates() {
            List<EndpointState> states = new ArrayList<>(routerView.size());
            for (int k = 0; k < routerView.size(); k++) {
                states.add(routerView.get(k).withPromptTokensInFlight(promptTokensInFlight[k].get()));
            }
            return states;
        }

        /**
         * Registers an adapter on a replica the first time a request for it goes there. Registered adapters start
         * on storage (not loaded), so this is the same as registering all of them up front, without reading
         * 1,000 adapter headers on each of 10 replicas for every run.
         */
        private void register(Replica r, int index, String name) {
            if (r.registered[index]) return;
            try {
                r.core.loadAdapter(name, adapterDir.resolve("lora"), false, false);
            } catch (AdapterException e) {
                throw new IllegalStateException("cannot register adapter " + name + ": " + e.getMessage(), e);
            }
            r.registered[index] = true;
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

    /** Passes outputs on and takes the prompt out of the tally at the first token or the end (what the proxy sees). */
    private record FirstAnswer(RequestListener inner, PromptInFlight inFlight) implements RequestListener {
        @Override
        public void onOutput(RequestOutput out) {
            if (out.outputTokens() > 0 || out.finished()) {
                inFlight.answered();
            }
            inner.onOutput(out);
        }

        @Override
        public boolean wantsText() {
            return inner.wantsText();
        }
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
