package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.prom.MalformedPageException;
import dev.patchbay.router.scrape.AdapterIds;
import dev.patchbay.router.scrape.EndpointMetrics;
import dev.patchbay.router.scrape.EndpointMetricsReader;
import dev.patchbay.router.scrape.UnusablePageException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The endpoints and what was last read from each. Every interval it re-reads the endpoint
 * source and scrapes every endpoint concurrently, one scrape in flight per endpoint at most.
 * An endpoint is ready when its last scrape succeeded within the staleness bound; when no
 * endpoint is, those whose last good data is within the longer max-staleness bound stand in
 * ({@link #candidates}). With {@link #learnServedModels} it also fetches every endpoint's model list, on an interval of its
 * own ({@link #servedModels}).
 */
public final class EndpointPool implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(EndpointPool.class.getName());

    /**
     * One endpoint's state. The status inside is immutable and swapped atomically, so readers take no lock;
     * changes that combine the last scrape with the router's own requests happen under the slot's lock.
     */
    static final class Slot {
        final AtomicReference<EndpointStatus> status;
        final AtomicBoolean scraping = new AtomicBoolean();
        /** The router's prompt tokens sent here and not yet answered (the answer's first byte). */
        final AtomicLong promptTokensInFlight = new AtomicLong();
        /** {@link #promptTokensInFlight} when the scrape that gave the current metrics began. */
        volatile long promptInFlightAtScrape;
        /** Scrapes that gave metrics, since the endpoint joined the pool. */
        final LongAdder goodScrapes = new LongAdder();
        /** The last good scrape as read, before the router's own requests are added to it. */
        private EndpointMetrics scraped;
        /** The router's counted requests that no scrape has shown yet, oldest first. */
        private final List<Send> unseen = new ArrayList<>();
        /** The router's adapter requests here that have not ended, by adapter. */
        private final Map<String, Integer> inFlightByAdapter = new HashMap<>();
        /** Why scrapes have failed since the last good one (the latest reason), or null: logged when it changes. */
        private ScrapeFailure failingFor;
        /** The endpoint's model list as last fetched; {@link ServedModels#UNKNOWN} before the first and after a failure. */
        final AtomicReference<ServedModels> served = new AtomicReference<>(ServedModels.UNKNOWN);
        /** A model list fetch is in flight (one at a time). */
        final AtomicBoolean listing = new AtomicBoolean();
        /** When the last model list fetch began, on the pool's clock; meaningful once {@link #listedOnce}. */
        volatile long listStartedNanos;

        volatile boolean listedOnce;
        /** Why the model list is not known, or null: logged when it changes; touched only by the fetch in flight. */
        private String listUnknownWhy;

        Slot(Endpoint endpoint) {
            status = new AtomicReference<>(new EndpointStatus(endpoint, null, 0, false, null));
        }

        /**
         * A good scrape that began at {@code startedNanos}: it shows no request sent after then. With
         * {@code untilShown} and a page that counts each adapter's requests, it is not taken to show every request sent
         * before then either: a server updates its page once per engine step, so a request it got just before the
         * scrape may not be on it yet, and as many of the router's requests for an adapter stay counted as the page
         * shows fewer than the router has there (the newest, as the server counts the older first), for at most
         * {@code untilShownNanos} after their send: a page can fall short of the router's count for other reasons
         * too (a request that ended on the server and whose end the router has not seen), and a request counted twice
         * for long keeps traffic off its server. 0: a scrape shows every request sent before it began.
         */
        synchronized void scraped(EndpointMetrics metrics, long startedNanos, long nowNanos, long untilShownNanos) {
            scraped = metrics;
            if (untilShownNanos > 0 && metrics.hasResidencyFamilies()) {
                forgetShown(metrics, startedNanos, startedNanos - untilShownNanos);
            } else {
                unseen.removeIf(request -> request.sentNanos() < startedNanos);
            }
            EndpointStatus before = status.get();
            status.set(new EndpointStatus(before.endpoint(), withUnseen(), nowNanos, false, null));
            goodScrapes.increment();
            if (failingFor != null) { // set by every failure, so also when one took the endpoint out
                LOG.log(System.Logger.Level.INFO, before.endpoint() + " answers its metrics again");
            }
            failingFor = null;
        }

        /**
         * {@link EndpointState#promptTokensInFlight}: the prompt tokens ahead of a request sent here now. This router's
         * own prompts not yet answered, which it knows at once, plus, from a page with {@code vllm:num_tokens_waiting},
         * what that count held beyond this router's prompts when the scrape began: the other routers'. A page is
         * older than the tally, so it only adds what the tally cannot know.
         */
        long promptBacklog(EndpointMetrics metrics) {
            long own = promptTokensInFlight.get();
            if (metrics == null || metrics.tokensWaiting() < 0) return own;
            return own + Math.max(0, metrics.tokensWaiting() - promptInFlightAtScrape);
        }

        /** {@code send} counts in this endpoint's metrics from now until a scrape shows it. */
        synchronized void count(Send send) {
            if (send.counted() || send.phase() == Send.Phase.DONE) {
                return;
            }
            send.markCounted();
            unseen.add(send);
            if (send.adapter() != null) {
                inFlightByAdapter.merge(send.adapter(), 1, Integer::sum);
            }
            EndpointStatus s = status.get();
            if (s.metrics() != null) {
                EndpointMetrics withSend = send.phase() == Send.Phase.RUNNING
                        ? s.metrics().withRequestRunning(send.adapter())
                        : s.metrics().withRequestSent(send.adapter());
                status.set(new EndpointStatus(s.endpoint(), withSend, s.lastGoodNanos(), s.failing(), s.lastError()));
            }
        }

        synchronized void advance(Send request, Send.Phase next) {
            if (!request.moveTo(next) || !request.counted()) {
                return;
            }
            if (next == Send.Phase.DONE && request.adapter() != null) {
                inFlightByAdapter.computeIfPresent(request.adapter(), (adapter, n) -> n > 1 ? n - 1 : null);
            }
            boolean counted = next == Send.Phase.DONE ? unseen.remove(request) : unseen.contains(request);
            EndpointStatus s = status.get();
            if (counted && scraped != null) { // else a scrape shows it already, as the server counts it
                status.set(
                        new EndpointStatus(s.endpoint(), withUnseen(), s.lastGoodNanos(), s.failing(), s.lastError()));
            }
        }

        /**
         * A failed scrape, or a refused connection: the endpoint is out until its next good scrape, but for a
         * time-out, which leaves its data to age. Logged when the reason changes, so a failing endpoint does not
         * log every round.
         */
        synchronized void fail(ScrapeFailure reason, String error) {
            boolean out = reason.takesOut();
            EndpointStatus before = status.getAndUpdate(
                    s -> new EndpointStatus(s.endpoint(), s.metrics(), s.lastGoodNanos(), s.failing() || out, error));
            if (reason != failingFor) { // a reason that takes out set failing when it was first seen
                LOG.log(
                        System.Logger.Level.WARNING,
                        out
                                ? before.endpoint() + " gets no new requests (" + reason.label() + "): " + error
                                : before.endpoint() + " did not answer its metrics in time (" + reason.label() + "): "
                                        + error);
            }
            failingFor = reason;
        }

        boolean listDue(long nowNanos, long intervalNanos) {
            return !listedOnce || nowNanos - listStartedNanos >= intervalNanos;
        }

        /**
         * A model list fetch's outcome: {@code models}, or with null, {@code why} it is not known. An unknown list
         * restricts nothing, so a failed fetch never takes the endpoint out of rotation by itself; logged when the
         * reason changes, as scrape failures are.
         */
        void listed(ServedModels models, String why) {
            Endpoint endpoint = status.get().endpoint();
            if (models != null && !models.known()) {
                models = null;
                why = "it lists no model";
            }
            served.set(models == null ? ServedModels.UNKNOWN : models);
            if (models != null && listUnknownWhy != null) {
                LOG.log(System.Logger.Level.INFO, endpoint + " lists its models again");
            } else if (models == null && !why.equals(listUnknownWhy)) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        endpoint + "'s model list is not known (" + why + "); it may get requests for any model");
            }
            listUnknownWhy = models == null ? why : null;
        }

        /** Drops from {@link #unseen} the requests that {@code metrics}' per-adapter counts show. */
        private void forgetShown(EndpointMetrics metrics, long startedNanos, long keptSinceNanos) {
            // Per adapter: the router's requests in flight here, less those sent after the scrape began (no page can
            // show them), less the page's count, is how many of those sent before it the page does not show.
            Map<String, Integer> notShown = new HashMap<>(inFlightByAdapter);
            for (Send request : unseen) {
                if (request.adapter() != null && request.sentNanos() >= startedNanos) {
                    notShown.merge(request.adapter(), -1, Integer::sum);
                }
            }
            notShown.replaceAll((adapter, n) -> n
                    - metrics.adapterRunning().getOrDefault(adapter, 0)
                    - metrics.adapterWaiting().getOrDefault(adapter, 0));
            for (int i = unseen.size() - 1; i >= 0; i--) { // newest first
                Send request = unseen.get(i);
                if (request.sentNanos() >= startedNanos) {
                    continue;
                }
                int missing = request.adapter() == null ? 0 : notShown.getOrDefault(request.adapter(), 0);
                if (missing > 0 && request.sentNanos() >= keptSinceNanos) {
                    notShown.put(request.adapter(), missing - 1);
                } else {
                    unseen.remove(i);
                }
            }
        }

        /** The last scrape with every request it cannot show yet, each as it stands now. */
        private EndpointMetrics withUnseen() {
            EndpointMetrics metrics = scraped;
            for (Send request : unseen) {
                metrics = switch (request.phase()) {
                    case WAITING -> metrics.withRequestSent(request.adapter());
                    case RUNNING -> metrics.withRequestRunning(request.adapter());
                    case DONE -> metrics;
                };
            }
            return metrics;
        }
    }

    /** Told of every failed scrape, with its reason. */
    @FunctionalInterface
    public interface FailureListener {
        void scrapeFailed(Endpoint endpoint, ScrapeFailure reason);
    }

    /**
     * The endpoints a pick may choose from, in list order.
     *
     * @param stale true when no eligible endpoint had fresh data, so these are read from older data
     */
    public record Candidates(List<EndpointState> states, boolean stale) {
        public Candidates {
            states = List.copyOf(states);
        }
    }

    /** Fetches a page; {@link MetricsFetcher#fetch} in production, a stub in tests. */
    @FunctionalInterface
    public interface Fetcher {
        String fetch(Endpoint endpoint) throws IOException, InterruptedException;
    }

    /**
     * Reads an endpoint's metrics. The router fetches and parses its page ({@link #pages}); the fleet simulator may
     * build them straight from an engine snapshot, a shortcut its tests prove equal to rendering and parsing.
     * {@code ids} is the pool's adapter id table, for the metrics to be built in.
     */
    @FunctionalInterface
    public interface MetricsSource {
        EndpointMetrics read(Endpoint endpoint, AdapterIds ids)
                throws IOException, InterruptedException, MalformedPageException, UnusablePageException;
    }

    /** Reads an endpoint's model list; {@link ModelsFetcher#fetch} in production, a stub in tests. */
    @FunctionalInterface
    public interface ModelsSource {
        ServedModels read(Endpoint endpoint) throws IOException, InterruptedException;
    }

    /**
     * Fetches each page with {@code fetcher} and parses it as the router does: a page that does not show the server's
     * load fails the scrape ({@link EndpointMetricsReader#readRoutable}).
     */
    public static MetricsSource pages(Fetcher fetcher) {
        EndpointMetricsReader reader = new EndpointMetricsReader();
        return (endpoint, ids) -> reader.readRoutable(fetcher.fetch(endpoint), ids);
    }

    /** How old an endpoint's last good data may be and still stand in when no endpoint has fresh data. */
    public static final Duration DEFAULT_MAX_STALENESS = Duration.ofSeconds(5);

    private final EndpointSource source;
    private final MetricsSource metricsSource;
    private final Duration interval;
    private final long stalenessNanos;
    private final long maxStalenessNanos;
    private final FailureListener onScrapeFailure;
    private final LongSupplier nanoClock;
    private final ExecutorService scrapes = Executors.newVirtualThreadPerTaskExecutor();
    /** This pool's adapter ids: every scrape's metrics are re-keyed to it, so its picks compare like with like. */
    private final AdapterIds adapterIds = new AdapterIds();

    private volatile Map<Endpoint, Slot> slots = Map.of();
    private volatile List<Endpoint> order = List.of();
    private volatile boolean running;
    /** The endpoint list has been read (or set) at least once. */
    private volatile boolean listRead;

    private Thread ticker;
    private String lastSourceError;
    private final List<Runnable> afterRound = new CopyOnWriteArrayList<>();
    /** With {@link #countRequestsUntilShown}, how long a request the page does not show stays counted; else 0. */
    private volatile long untilShownNanos;
    /** Where model lists come from, or null: none are fetched ({@link #learnServedModels}). */
    private volatile ModelsSource modelsSource;
    /**
     * Every endpoint's model list in list order, rebuilt when a list or the endpoint list changes (rarely), so that
     * every decision reads it without copying.
     */
    private volatile Map<Endpoint, ServedModels> servedSnapshot = Map.of();

    private volatile long listIntervalNanos;

    /** Pages fetched with {@code fetcher}; max staleness {@link #defaultMaxStaleness}. */
    public EndpointPool(
            EndpointSource source,
            Fetcher fetcher,
            Duration interval,
            Duration staleness,
            Consumer<Endpoint> onScrapeFailure) {
        this(source, pages(fetcher), interval, staleness, onScrapeFailure, System::nanoTime);
    }

    /** Max staleness {@link #defaultMaxStaleness}. */
    public EndpointPool(
            EndpointSource source,
            MetricsSource metricsSource,
            Duration interval,
            Duration staleness,
            Consumer<Endpoint> onScrapeFailure,
            LongSupplier nanoClock) {
        this(
                source,
                metricsSource,
                interval,
                staleness,
                defaultMaxStaleness(staleness),
                (endpoint, reason) -> onScrapeFailure.accept(endpoint),
                nanoClock);
    }

    /** Refuses a max staleness below the staleness: stale data can stand in only for data older than fresh. */
    public static void checkStaleness(Duration staleness, Duration maxStaleness) {
        if (maxStaleness.compareTo(staleness) < 0) {
            throw new IllegalArgumentException("max staleness (" + maxStaleness.toMillis()
                    + " ms) must be at least the staleness (" + staleness.toMillis() + " ms)");
        }
    }

    /**
     * @param staleness    how old an endpoint's data may be for it to be ready
     * @param maxStaleness how old it may be to stand in when no endpoint's data is fresh; at least {@code staleness}
     * @param nanoClock    the time of scrapes, sends and staleness ({@code System::nanoTime}, or a simulator's virtual
     *                     clock, which then calls {@link #scrapeNow} instead of {@link #start})
     */
    public EndpointPool(
            EndpointSource source,
            MetricsSource metricsSource,
            Duration interval,
            Duration staleness,
            Duration maxStaleness,
            FailureListener onScrapeFailure,
            LongSupplier nanoClock) {
        checkStaleness(staleness, maxStaleness);
        this.source = source;
        this.metricsSource = metricsSource;
        this.interval = interval;
        this.stalenessNanos = staleness.toNanos();
        this.maxStalenessNanos = maxStaleness.toNanos();
        this.onScrapeFailure = onScrapeFailure;
        this.nanoClock = nanoClock;
    }

    /** The time of scrapes, sends and staleness: the router's nanosecond clock, or a simulator's virtual one. */
    public LongSupplier clock() {
        return nanoClock;
    }

    /** {@link #DEFAULT_MAX_STALENESS}, or {@code staleness} when that is longer. */
    public static Duration defaultMaxStaleness(Duration staleness) {
        return staleness.compareTo(DEFAULT_MAX_STALENESS) > 0 ? staleness : DEFAULT_MAX_STALENESS;
    }

    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        ticker = Thread.ofPlatform().daemon().name("patchbay-scrape-ticker").start(this::tickLoop);
    }

    private void tickLoop() {
        while (running) {
            long started = System.nanoTime();
            tick();
            long sleepNanos = interval.toNanos() - (System.nanoTime() - started);
            if (sleepNanos > 0) {
                try {
                    Thread.sleep(Duration.ofNanos(sleepNanos));
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /**
     * Runs {@code listener} after each scrape round: in {@link #tick} before it starts the next round's scrapes (the
     * last round's have ended by then unless an endpoint is slow), in {@link #scrapeNow} once the round is done.
     */
    public void afterEachRound(Runnable listener) {
        afterRound.add(listener);
    }

    /**
     * From now on, a request the router sent counts in its endpoint's metrics until the page's own per-adapter
     * counts show it, not only until a scrape begun after the send ({@link Slot#scraped}), for at most
     * {@value #UNTIL_SHOWN_INTERVALS} scrape intervals: the view that holding requests for slots needs, since a slot
     * a page one engine step old still shows free may be taken. Bounded, since a page can fall short of the router's
     * count for good (a request that ended on the server and whose end the router has not seen), and a request
     * counted twice for long keeps traffic off its server (docs/lab/2026-12-04-slot-wait.md).
     */
    public void countRequestsUntilShown() {
        untilShownNanos = UNTIL_SHOWN_INTERVALS * interval.toNanos();
    }

    /** See {@link #countRequestsUntilShown}. */
    static final int UNTIL_SHOWN_INTERVALS = 2;

    /**
     * From now on every endpoint's model list is read with {@code source} once per {@code interval}, in the scrape
     * rounds (the first in an endpoint's first round), one fetch in flight per endpoint at most: what each endpoint
     * serves changes only when an adapter is loaded or unloaded, so it is read far less often than the load. Without
     * this call no list is known and every endpoint may get every model (the fleet simulator's servers serve all).
     */
    public void learnServedModels(ModelsSource source, Duration interval) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("the model list interval must be positive");
        }
        listIntervalNanos = interval.toNanos();
        modelsSource = source;
    }

    /** One round: refresh the endpoint list, then start a scrape of every idle endpoint. */
    public void tick() {
        afterRound.forEach(Runnable::run);
        refreshEndpoints();
        ModelsSource lists = modelsSource;
        long now = nanoClock.getAsLong();
        for (Slot slot : slots.values()) {
            if (slot.scraping.compareAndSet(false, true)) {
                try {
                    scrapes.execute(() -> scrape(slot));
                } catch (RejectedExecutionException closed) {
                    slot.scraping.set(false);
                    return;
                }
            }
            if (lists != null && slot.listDue(now, listIntervalNanos) && slot.listing.compareAndSet(false, true)) {
                try {
                    scrapes.execute(() -> list(slot, lists));
                } catch (RejectedExecutionException closed) {
                    slot.listing.set(false);
                    return;
                }
            }
        }
    }

    /**
     * One round on the calling thread: refresh the endpoint list, then scrape every endpoint in list order, each
     * finished before the next begins. For a simulator on a virtual clock, where a round must be deterministic.
     */
    public void scrapeNow() {
        refreshEndpoints();
        Map<Endpoint, Slot> current = slots;
        for (Endpoint endpoint : order) {
            Slot slot = current.get(endpoint);
            if (slot != null && slot.scraping.compareAndSet(false, true)) {
                scrape(slot);
            }
            ModelsSource lists = modelsSource;
            if (slot != null
                    && lists != null
                    && slot.listDue(nanoClock.getAsLong(), listIntervalNanos)
                    && slot.listing.compareAndSet(false, true)) {
                list(slot, lists);
            }
        }
        afterRound.forEach(Runnable::run);
    }

    private void refreshEndpoints() {
        List<Endpoint> wanted;
        try {
            wanted = source.current();
            lastSourceError = null;
        } catch (IOException e) {
            if (!e.getMessage().equals(lastSourceError)) {
                LOG.log(System.Logger.Level.WARNING, "keeping the previous endpoints: " + e.getMessage());
                lastSourceError = e.getMessage();
            }
            return;
        }
        setEndpoints(wanted);
    }

    /** Replaces the endpoint set; endpoints that stay keep their state. */
    public synchronized void setEndpoints(List<Endpoint> wanted) {
        if (!wanted.equals(order)) {
            Map<Endpoint, Slot> next = new HashMap<>();
            for (Endpoint endpoint : wanted) {
                Slot existing = slots.get(endpoint);
                next.put(endpoint, existing != null ? existing : new Slot(endpoint));
            }
            slots = Map.copyOf(next);
            order = List.copyOf(wanted);
            snapshotServedModels();
        }
        listRead = true; // after the list is in place, so that synced() never sees the flag with the old list
    }

    private void scrape(Slot slot) {
        Endpoint endpoint = slot.status.get().endpoint();
        long started = nanoClock.getAsLong();
        long promptAtStart = slot.promptTokensInFlight.get();
        try {
            // (a source that built them in another table is re-keyed; one that used the pool's costs nothing here)
            EndpointMetrics metrics = metricsSource.read(endpoint, adapterIds).inTable(adapterIds);
            slot.promptInFlightAtScrape = promptAtStart;
            slot.scraped(metrics, started, nanoClock.getAsLong(), untilShownNanos);
        } catch (IOException | MalformedPageException | UnusablePageException | RuntimeException e) {
            ScrapeFailure reason = ScrapeFailure.of(e);
            slot.fail(
                    reason,
                    switch (e) {
                        case MalformedPageException m -> "malformed page: " + m.getMessage();
                        case UnusablePageException u -> "unusable page: " + u.getMessage();
                        case MetricsFetcher.TimedOutException t -> t.getMessage();
                        case MetricsFetcher.BadStatusException b -> b.getMessage();
                        default -> e.toString();
                    });
            onScrapeFailure.scrapeFailed(endpoint, reason);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            slot.scraping.set(false);
        }
    }

    private void list(Slot slot, ModelsSource source) {
        Endpoint endpoint = slot.status.get().endpoint();
        slot.listStartedNanos = nanoClock.getAsLong();
        slot.listedOnce = true;
        ServedModels before = slot.served.get();
        try {
            slot.listed(source.read(endpoint), null);
        } catch (IOException | RuntimeException e) {
            slot.listed(null, e.getMessage() == null ? e.toString() : e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            slot.listing.set(false);
        }
        if (!slot.served.get().equals(before)) {
            snapshotServedModels();
        }
    }

    /** Rebuilds {@link #servedSnapshot} from the slots; under the pool's lock, so the last rebuild reads the last lists. */
    private synchronized void snapshotServedModels() {
        Map<Endpoint, ServedModels> all = new LinkedHashMap<>();
        forEachSlot((endpoint, slot) -> all.put(endpoint, slot.served.get()));
        servedSnapshot = Collections.unmodifiableMap(all);
    }

    /** Every endpoint in the pool with its slot, in list order. */
    private void forEachSlot(BiConsumer<Endpoint, Slot> action) {
        Map<Endpoint, Slot> current = slots;
        for (Endpoint endpoint : order) {
            Slot slot = current.get(endpoint);
            if (slot != null) {
                action.accept(endpoint, slot);
            }
        }
    }

    /** What {@code endpoint} lists on {@code /v1/models}, as last fetched; {@link ServedModels#UNKNOWN} if not in the pool. */
    public ServedModels servedModels(Endpoint endpoint) {
        Slot slot = slots.get(endpoint);
        return slot == null ? ServedModels.UNKNOWN : slot.served.get();
    }

    /** Every endpoint's model list ({@link #servedModels(Endpoint)}), ready or not, in list order; not to be changed. */
    public Map<Endpoint, ServedModels> servedModels() {
        return servedSnapshot;
    }

    /** Takes the endpoint out of rotation until its next good scrape (a refused connection). */
    public void markUnreachable(Endpoint endpoint, String why) {
        Slot slot = slots.get(endpoint);
        if (slot != null) {
            slot.fail(ScrapeFailure.UNREACHABLE, why);
        }
    }

    /**
     * Records a request just sent to {@code endpoint}: its {@code promptTokens} count in the endpoint's prefill tally
     * until the answer's first byte, and once the returned send is {@link Send#countUntilShown counted}, the request
     * counts in the endpoint's metrics until a scrape shows it. For an endpoint not in the pool the send counts nowhere;
     * an endpoint removed and re-added meanwhile is not touched.
     *
     * @param adapter the request's adapter, or null for a base-model request
     */
    public Send sent(Endpoint endpoint, String adapter, long promptTokens) {
        return new Send(this, endpoint, slots.get(endpoint), adapter, promptTokens, nanoClock.getAsLong());
    }

    /** Prompt tokens sent to {@code endpoint} and not answered yet; 0 for an endpoint not in the pool. */
    public long promptTokensInFlight(Endpoint endpoint) {
        Slot slot = slots.get(endpoint);
        return slot == null ? 0 : slot.promptTokensInFlight.get();
    }

    /** {@link EndpointState#promptTokensInFlight} for {@code endpoint} now; 0 for an endpoint not in the pool. */
    public long promptBacklog(Endpoint endpoint) {
        Slot slot = slots.get(endpoint);
        return slot == null ? 0 : slot.promptBacklog(slot.status.get().metrics());
    }

    /** The endpoints that may get new requests, with their latest metrics, in list order: {@link #candidates}. */
    public List<EndpointState> readyStates() {
        return candidates(endpoint -> true).states();
    }

    /**
     * The endpoints among {@code eligible} that may get new requests, with their latest metrics, in list order: those
     * whose last scrape succeeded within the staleness bound. When there are none (a busy host slows every scrape at
     * once), refusing every request would be worse than routing on older data, so the endpoints whose last good data
     * is within the max-staleness bound stand in, and the result says so. Their data is trusted less the older it
     * is: one whose data is older than the freshest by more than the staleness bound is left out, as it would be
     * were the freshest fresh. An endpoint whose scrape failed, or that refused a connection, since its last good
     * scrape never stands in.
     */
    public Candidates candidates(Predicate<Endpoint> eligible) {
        long now = nanoClock.getAsLong();
        Map<Endpoint, Slot> current = slots;
        List<EndpointState> fresh = new ArrayList<>(current.size());
        List<EndpointStatus> stale = new ArrayList<>();
        List<Slot> staleSlots = new ArrayList<>();
        long freshestStaleAge = Long.MAX_VALUE;
        for (Endpoint endpoint : order) {
            Slot slot = current.get(endpoint);
            EndpointStatus status = slot == null ? null : slot.status.get();
            if (status == null || !status.isUsable() || !eligible.test(endpoint)) {
                continue;
            }
            long age = now - status.lastGoodNanos();
            if (age <= stalenessNanos) {
                fresh.add(new EndpointState(endpoint, status.metrics(), slot.promptBacklog(status.metrics())));
            } else if (fresh.isEmpty() && age <= maxStalenessNanos) {
                stale.add(status);
                staleSlots.add(slot);
                freshestStaleAge = Math.min(freshestStaleAge, age);
            }
        }
        if (!fresh.isEmpty() || stale.isEmpty()) {
            return new Candidates(fresh, false);
        }
        List<EndpointState> standIns = new ArrayList<>(stale.size());
        for (int i = 0; i < stale.size(); i++) {
            EndpointStatus status = stale.get(i);
            if (now - status.lastGoodNanos() - freshestStaleAge <= stalenessNanos) {
                standIns.add(new EndpointState(
                        status.endpoint(), status.metrics(), staleSlots.get(i).promptBacklog(status.metrics())));
            }
        }
        return new Candidates(standIns, true);
    }

    /**
     * The pool knows what it has: its endpoint list has been read, and every endpoint on it has had its first scrape
     * end, well or not. Until then no pick can be trusted to see the whole pool; after it, an endpoint that is not
     * ready is a fact about that endpoint, not about the pool.
     */
    public boolean synced() {
        if (!listRead) {
            return false;
        }
        for (EndpointStatus status : statuses()) {
            if (status.metrics() == null && status.lastError() == null) {
                return false;
            }
        }
        return true;
    }

    /** Scrapes that gave metrics, per endpoint in list order, since each joined the pool. */
    public Map<Endpoint, Long> goodScrapes() {
        Map<Endpoint, Long> counts = new LinkedHashMap<>();
        forEachSlot((endpoint, slot) -> counts.put(endpoint, slot.goodScrapes.sum()));
        return counts;
    }

    /** Every endpoint's status, ready or not, in list order. */
    public List<EndpointStatus> statuses() {
        List<EndpointStatus> all = new ArrayList<>(order.size());
        forEachSlot((endpoint, slot) -> all.add(slot.status.get()));
        return all;
    }

    @Override
    public void close() {
        Thread stopping;
        synchronized (this) {
            running = false;
            stopping = ticker;
            ticker = null;
        }
        if (stopping != null) {
            stopping.interrupt();
            try {
                stopping.join(Duration.ofSeconds(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        scrapes.shutdownNow();
    }
}
