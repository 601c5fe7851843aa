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
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.profile.ProfileFile;
import dev.patchbay.router.place.AdapterAdmin;
import dev.patchbay.router.pool.EndpointPool;
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
    /** Independent routers in front of the fleet, requests split among them round-robin. */
    private final int routers;
    /** Each adapter's index in the workload, by name. */
    private final Map<String, Integer> adapterIndex = new HashMap<>();
    /** Where placement finds each adapter's files: the one adapter on storage serves every name. */
    private final Map<String, String> adapterPaths = new HashMap<>();

    public FleetSimulator(SimSettings settings) {
        this(settings, ScrapePath.SNAPSHOT);
    }

    public FleetSimulator(SimSettings settings, ScrapePath scrapePath) {
        this(settings, scrapePath, null);
    }

    /** With {@code profileFile} (or null), whose profiles the policies may name besides the built-in ones. */
    public FleetSimulator(SimSettings settings, ScrapePath scrapePath, ProfileFile profileFile) {
        this(settings, scrapePath, profileFile, 1);
    }

    /** With {@code routers} independent routers, each scraping on its own phase. */
    public FleetSimulator(SimSettings settings, ScrapePath scrapePath, ProfileFile profileFile, int routers) {
        if (routers < 1) throw new IllegalArgumentException("routers must be >= 1, got " + routers);
        this.routers = routers;
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
        List<String> names = settings.workload().adapters();
        for (int i = 0; i < names.size(); i++) {
            adapterIndex.put(names.get(i), i);
            adapterPaths.put(names.get(i), adapterDir.resolve("lora").toString());
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
        RequestLedger ledger = new RequestLedger(trace, clock);
        Run run = new Run(replicas, resolved, seed, trace, ledger, clock);
        try {
            run.loop(progress);
        } finally {
            for (SimRouter router : run.routers) router.close();
        }
        RunResult result = RunSummary.of(
                settings,
                policy,
                rate,
                ledger,
                replicas,
                run.sentTo,
                run.lastEndNanos,
                (System.nanoTime() - wallStart) / 1e9);
        long refusals =
                run.routers.stream().mapToLong(r -> r.lifecycle.slotRefusals()).sum();
        return result.withPlacement(run.placementLoads(), run.disagreementShare())
                .withSlotRefusals(refusals);
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
                    .maxConcurrentAdapterLoads(settings.loadsInFlight())
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
        /** The routers in front of the fleet; requests go to them in turn. */
        final List<SimRouter> routers = new ArrayList<>();

        private int nextRouter;
        private long lastEndNanos;
        private final int[] sentTo;
        private long placementConsulted;
        private long placementDisagreed;

        Run(
                List<Replica> replicas,
                SimPolicy policy,
                long seed,
                Trace trace,
                RequestLedger ledger,
                VirtualClock clock) {
            this.replicas = replicas;
            this.trace = trace;
            this.ledger = ledger;
            this.clock = clock;
            for (Replica r : replicas) byEndpoint.put(r.endpoint, r);
            sentTo = new int[replicas.size()];
            List<Endpoint> endpoints = replicas.stream().map(r -> r.endpoint).toList();
            AdapterAdmin admin = new EngineAdmin(byEndpoint, adapterIndex);
            EndpointPool.MetricsSource source = switch (scrapePath) {
                case TEXT ->
                    EndpointPool.pages(endpoint -> byEndpoint.get(endpoint).page());
                case SNAPSHOT -> (endpoint, ids) -> byEndpoint.get(endpoint).scrapedMetrics(ids);
            };
            int count = FleetSimulator.this.routers;
            for (int i = 0; i < count; i++) {
                routers.add(new SimRouter(
                        i,
                        count,
                        policy,
                        seed,
                        endpoints,
                        source,
                        this::scrapeFailed,
                        settings.scrapeNanos(),
                        clock,
                        admin,
                        adapterPaths));
            }
        }

        long placementLoads() {
            long loads = 0;
            for (SimRouter r : routers) {
                if (r.placement != null) loads += r.placement.loadsStarted();
            }
            return loads;
        }

        /** Of the requests routed with placement and several routers, the share whose adapter's homes differed. */
        double disagreementShare() {
            return placementConsulted == 0 ? 0 : (double) placementDisagreed / placementConsulted;
        }

        /** A replica's page always renders and parses; if one did not, the run's numbers would mean nothing. */
        private void scrapeFailed(Endpoint endpoint) {
            String why = routers.stream()
                    .flatMap(r -> r.pool.statuses().stream())
                    .filter(st -> st.endpoint().equals(endpoint))
                    .findFirst()
                    .map(EndpointStatus::lastError)
                    .orElse("unknown");
            throw new IllegalStateException("the router could not read " + endpoint + ": " + why);
        }

        void loop(DoubleConsumer progress) {
            long stopAt = settings.durationNanos() + settings.drainNanos();
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
                boolean waiting = false; // released at a coming scrape
                long nextScrape = Long.MAX_VALUE;
                for (SimRouter router : routers) {
                    waiting |= router.lifecycle.waitingForSlot() > 0;
                    nextScrape = Math.min(nextScrape, router.nextScrape);
                }
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
                for (SimRouter router : routers) {
                    if (t == router.nextScrape) {
                        router.pool.scrapeNow();
                        router.nextScrape += settings.scrapeNanos();
                    }
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

        /**
         * Through the router's request lifecycle, as the real router routes: the send is recorded with the pool and the
         * request submitted once its pick stands, at once or, when it waits for a slot, after the scrape round that
         * releases it.
         */
        private void route(int i) {
            String adapter = settings.workload().adapters().get(trace.adapter()[i]);
            RequestLifecycle.Admitted admitted =
                    new RequestLifecycle.Admitted(PickRequest.adapter(adapter), null, false, trace.promptTokens()[i]);
            SimRouter router = routers.get(nextRouter);
            nextRouter = (nextRouter + 1) % routers.size();
            if (routers.size() > 1 && router.placement != null) tallyAgreement(adapter);
            router.lifecycle.route(
                    admitted, RequestLifecycle.ANY_ENDPOINT, decision -> submit(router, i, adapter, decision));
        }

        private void tallyAgreement(String adapter) {
            placementConsulted++;
            List<Endpoint> first = routers.getFirst().lifecycle.placement().homesOf(adapter);
            for (SimRouter other : routers) {
                if (!other.lifecycle.placement().homesOf(adapter).equals(first)) {
                    placementDisagreed++;
                    return;
                }
            }
        }

        private void submit(SimRouter router, int i, String adapter, RouteDecision decision) {
            if (decision.refused()) {
                ledger.refused(i);
                return;
            }
            Send send = decision.send();
            Replica r = byEndpoint.get(send.endpoint());
            sentTo[r.index]++;
            if (!register(r, trace.adapter()[i], adapter)) {
                // Being unloaded there by a router that released it: the server refuses it, as a real one would.
                send.finished();
                ledger.refused(i);
                return;
            }
            EngineRequest req = new EngineRequest(
                    prompt(trace.promptTokens()[i]),
                    adapter,
                    SamplingParams.fixedLength(trace.outputTokens()[i]),
                    clock.nanos(),
                    new AnswerStream(ledger.sent(i), send));
            try {
                if (decision.requiresSlot()) r.core.submitIfSlot(req);
                else r.core.submit(req);
                r.wantsStep = true;
            } catch (RequestRejectedException e) {
                send.finished();
                if (e.reason() == RequestRejectedException.Reason.NO_SLOT) {
                    // Another router took the slot this one's page showed free: it waits in the router again.
                    router.lifecycle.slotRefused(decision, again -> submit(router, i, adapter, again));
                } else {
                    ledger.refused(i);
                }
            }
        }

        /**
         * Registers an adapter on a replica the first time a request for it goes there. Registered adapters start
         * on storage (not loaded), so this is the same as registering all of them up front, without reading
         * 1,000 adapter headers on each of 10 replicas for every run.
         */
        private boolean register(Replica r, int index, String name) {
            if (r.registered[index]) return true;
            try {
                r.core.loadAdapter(name, adapterDir.resolve("lora"), false, false);
            } catch (AdapterException e) {
                if (e.kind() == AdapterException.Kind.CONFLICT) return false; // still being unloaded
                throw new IllegalStateException("cannot register adapter " + name + ": " + e.getMessage(), e);
            }
            r.registered[index] = true;
            return true;
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
