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
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.profile.ProfileFile;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.EndpointSource;
import dev.patchbay.router.pool.EndpointStatus;
import dev.patchbay.router.pool.Send;
import dev.patchbay.router.route.RequestLifecycle;
import dev.patchbay.router.route.RouteDecision;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.DoubleConsumer;

/**
 * N replicas of the real engine (scheduler, KV cache, adapter tiers; simulated executor) behind the real
 * router picker and the router's own endpoint pool, on one virtual clock. Each replica runs one step at a time: it
 * begins a step when the clock is at its free time and finishes it exactly at start + modeled time. The pool scrapes
 * every replica every {@code scrapeNanos} and counts the router's requests in flight as the real router does.
 */
public final class FleetSimulator implements AutoCloseable {
    private static final int ADAPTER_RANK = 8;
    /** Scrapes never fail here; the bound only has to be one the real router would accept. */
    private static final Duration STALENESS = Duration.ofSeconds(10);

    /** How the router's pool reads a replica. */
    public enum ScrapePath {
        /** Each replica's /metrics page rendered by the metrics module and parsed by the router's reader. */
        TEXT,
        /** The same {@code EndpointMetrics} built straight from the engine snapshot ({@link SnapshotScrape}). */
        SNAPSHOT;

        /** {@code text} or {@code snapshot}, as the commands' {@code --scrape-path} takes it. */
        public static ScrapePath parse(String name) {
            return switch (name) {
                case "text" -> TEXT;
                case "snapshot" -> SNAPSHOT;
                default ->
                    throw new IllegalArgumentException("--scrape-path must be text or snapshot, got '" + name + "'");
            };
        }
    }

    private final SimSettings settings;
    private final ScrapePath scrapePath;
    /** Profiles of one's own the policies may name, or null. */
    private final ProfileFile profileFile;

    private final Path adapterDir;

    public FleetSimulator(SimSettings settings) {
        this(settings, ScrapePath.SNAPSHOT);
    }

    public FleetSimulator(SimSettings settings, ScrapePath scrapePath) {
        this(settings, scrapePath, null);
    }

    /** With {@code profileFile} (or null), whose profiles the policies may name besides the built-in ones. */
    public FleetSimulator(SimSettings settings, ScrapePath scrapePath, ProfileFile profileFile) {
        this.settings = settings;
        this.scrapePath = scrapePath;
        this.profileFile = profileFile;
        try {
            // One adapter on storage serves every name: the simulated executor never reads the weights.
            adapterDir = Files.createTempDirectory("patchbay-fleet-");
            PeftWriter.write(
                    adapterDir.resolve("lora"), SimModel.DEFAULT_CONFIG, "sim", ADAPTER_RANK, 16, List.of("q_proj"), 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public SimSettings settings() {
        return settings;
    }

    /**
     * Runs one policy ({@link SimPolicy#of}) over {@code trace}; {@code progress} gets the share of arrival time
     * simulated so far.
     */
    public RunResult run(String policy, Trace trace, double rate, long seed, DoubleConsumer progress) {
        long wallStart = System.nanoTime();
        SimPolicy resolved = SimPolicy.of(policy, profileFile);
        VirtualClock clock = new VirtualClock();
        List<Replica> replicas = startReplicas(clock, seed);
        EndpointPicker picker = resolved.profile().create(new Random(seed), clock::nanos);
        RequestLedger ledger = new RequestLedger(trace, clock);
        Run run = new Run(replicas, picker, resolved, trace, ledger, clock);
        try (run.pool) {
            run.loop(progress);
        }
        return RunSummary.of(
                settings,
                policy,
                rate,
                ledger,
                replicas,
                run.sentTo,
                run.lastEndNanos,
                (System.nanoTime() - wallStart) / 1e9);
    }

    private List<Replica> startReplicas(VirtualClock clock, long seed) {
        Workload w = settings.workload();
        List<Replica> replicas = new ArrayList<>(w.replicas());
        for (int i = 0; i < w.replicas(); i++) {
            EngineConfig config = EngineConfig.builder("sim")
                    .enableLora(true)
                    .maxLoras(w.maxLoras())
                    .maxCpuLoras(w.maxCpuLoras())
                    .maxLoraRank(16)
                    .maxNumSeqs(settings.maxNumSeqs())
                    .numKvBlocks(settings.numKvBlocks())
                    .maxModelLen(settings.maxModelLen())
                    .seed(seed + i)
                    .build();
            SimModel model = new SimModel(
                    "sim", SimModel.DEFAULT_CONFIG, settings.latency(), SimulatedExecutor.TextMode.RANDOM, 0.0);
            // On a virtual clock the engine loads adapters inline, so it needs no loader pool and no wakeup.
            EngineCore core = new EngineCore(config, model, clock, null, () -> {});
            replicas.add(new Replica(i, core, w.adapters().size()));
        }
        return replicas;
    }

    /** The mutable state of one run and its event loop. */
    private final class Run {
        private final List<Replica> replicas;
        private final Trace trace;
        private final RequestLedger ledger;
        private final VirtualClock clock;
        private final Map<Endpoint, Replica> byEndpoint = new HashMap<>();
        private final int[][] prompts = new int[settings.maxModelLen()][];
        /** The router's own pool: last scrapes, its requests in flight, the prompt tally, on the virtual clock. */
        final EndpointPool pool;
        /** The router's request lifecycle: every request is routed through it, as the real router routes. */
        private final RequestLifecycle lifecycle;

        private long lastEndNanos;
        private final int[] sentTo;

        Run(
                List<Replica> replicas,
                EndpointPicker picker,
                SimPolicy policy,
                Trace trace,
                RequestLedger ledger,
                VirtualClock clock) {
            this.replicas = replicas;
            this.trace = trace;
            this.ledger = ledger;
            this.clock = clock;
            for (Replica r : replicas) byEndpoint.put(r.endpoint, r);
            sentTo = new int[replicas.size()];
            EndpointPool.MetricsSource source = switch (scrapePath) {
                case TEXT ->
                    EndpointPool.pages(endpoint -> byEndpoint.get(endpoint).page());
                case SNAPSHOT -> (endpoint, ids) -> byEndpoint.get(endpoint).scrapedMetrics(ids);
            };
            List<Endpoint> endpoints = replicas.stream().map(r -> r.endpoint).toList();
            pool = new EndpointPool(
                    EndpointSource.of(endpoints),
                    source,
                    Duration.ofNanos(settings.scrapeNanos()),
                    STALENESS,
                    this::scrapeFailed,
                    clock::nanos);
            lifecycle = new RequestLifecycle(pool, picker, policy.flowControl());
        }

        /** A replica's page always renders and parses; if one did not, the run's numbers would mean nothing. */
        private void scrapeFailed(Endpoint endpoint) {
            String why = pool.statuses().stream()
                    .filter(st -> st.endpoint().equals(endpoint))
                    .findFirst()
                    .map(EndpointStatus::lastError)
                    .orElse("unknown");
            throw new IllegalStateException("the router could not read " + endpoint + ": " + why);
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
                boolean waiting = lifecycle.waitingForSlot() > 0; // released at a coming scrape
                if (arrival == Long.MAX_VALUE && !busy && !waiting) break;
                if (arrival == Long.MAX_VALUE && replicaEvent == Long.MAX_VALUE && !waiting) break; // stalled
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
            pool.scrapeNow();
        }

        /**
         * Through the router's request lifecycle, as the real router routes: the send is recorded with the pool and the
         * request submitted once its pick stands, at once or, when it waits for a slot, after the scrape round that
         * releases it.
         */
        private void route(int i) {
            String adapter = settings.workload().adapters().get(trace.adapter()[i]);
            RequestLifecycle.Admitted admitted =
                    new RequestLifecycle.Admitted(PickRequest.adapter(adapter), null, false, trace.promptTokens()[i]);
            lifecycle.route(admitted, RequestLifecycle.ANY_ENDPOINT, decision -> submit(i, adapter, decision));
        }

        private void submit(int i, String adapter, RouteDecision decision) {
            if (decision.refused()) {
                ledger.refused(i);
                return;
            }
            Send send = decision.send();
            Replica r = byEndpoint.get(send.endpoint());
            sentTo[r.index]++;
            register(r, trace.adapter()[i], adapter);
            EngineRequest req = new EngineRequest(
                    prompt(trace.promptTokens()[i]),
                    adapter,
                    SamplingParams.fixedLength(trace.outputTokens()[i]),
                    clock.nanos(),
                    new AnswerStream(ledger.sent(i), send));
            try {
                r.core.submit(req);
                r.wantsStep = true;
            } catch (RequestRejectedException e) {
                send.finished();
                ledger.refused(i);
            }
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

    /**
     * Passes outputs on and tells the pool what the proxy of a streamed answer sees: its first byte at the first
     * token, its end when the request finishes.
     */
    private record AnswerStream(RequestListener inner, Send send) implements RequestListener {
        @Override
        public void onOutput(RequestOutput out) {
            if (out.finished()) {
                send.finished();
            } else if (out.outputTokens() > 0) {
                send.answering();
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
