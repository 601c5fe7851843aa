package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.prom.MalformedPageException;
import dev.patchbay.router.scrape.EndpointMetrics;
import dev.patchbay.router.scrape.EndpointMetricsReader;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The endpoints and what was last read from each. Every interval it re-reads the endpoint
 * source and scrapes every endpoint concurrently, one scrape in flight per endpoint at most.
 * An endpoint is ready when its last scrape succeeded within the staleness bound.
 */
public final class EndpointPool implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(EndpointPool.class.getName());

    /** One endpoint's mutable slot; the status inside is immutable and swapped atomically. */
    private static final class Slot {
        final AtomicReference<EndpointStatus> status;
        final AtomicBoolean scraping = new AtomicBoolean();
        /** {@link EndpointState#promptTokensInFlight}: kept across scrapes, as no scrape shows it. */
        final AtomicLong promptTokensInFlight = new AtomicLong();

        Slot(Endpoint endpoint) {
            status = new AtomicReference<>(new EndpointStatus(endpoint, null, 0, false, null));
        }
    }

    /** Fetches a page; {@link MetricsFetcher#fetch} in production, a stub in tests. */
    @FunctionalInterface
    public interface Fetcher {
        String fetch(Endpoint endpoint) throws IOException, InterruptedException;
    }

    private final EndpointSource source;
    private final Fetcher fetcher;
    private final Duration interval;
    private final long stalenessNanos;
    private final Consumer<Endpoint> onScrapeFailure;
    private final EndpointMetricsReader reader = new EndpointMetricsReader();
    private final ExecutorService scrapes = Executors.newVirtualThreadPerTaskExecutor();
    private volatile Map<Endpoint, Slot> slots = Map.of();
    private volatile List<Endpoint> order = List.of();
    private volatile boolean running;
    private Thread ticker;
    private String lastSourceError;

    public EndpointPool(EndpointSource source, Fetcher fetcher, Duration interval, Duration staleness,
                        Consumer<Endpoint> onScrapeFailure) {
        this.source = source;
        this.fetcher = fetcher;
        this.interval = interval;
        this.stalenessNanos = staleness.toNanos();
        this.onScrapeFailure = onScrapeFailure;
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

    /** One round: refresh the endpoint list, then start a scrape of every idle endpoint. */
    public void tick() {
        refreshEndpoints();
        for (Slot slot : slots.values()) {
            if (slot.scraping.compareAndSet(false, true)) {
                try {
                    scrapes.execute(() -> scrape(slot));
                } catch (java.util.concurrent.RejectedExecutionException closed) {
                    slot.scraping.set(false);
                    return;
                }
            }
        }
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
        if (wanted.equals(order)) {
            return;
        }
        Map<Endpoint, Slot> next = new HashMap<>();
        for (Endpoint endpoint : wanted) {
            Slot existing = slots.get(endpoint);
            next.put(endpoint, existing != null ? existing : new Slot(endpoint));
        }
        slots = Map.copyOf(next);
        order = List.copyOf(wanted);
    }

    private void scrape(Slot slot) {
        Endpoint endpoint = slot.status.get().endpoint();
        try {
            EndpointMetrics metrics = reader.read(fetcher.fetch(endpoint));
            EndpointStatus before = slot.status.getAndSet(
                    new EndpointStatus(endpoint, metrics, System.nanoTime(), false, null));
            if (before.failing()) {
                LOG.log(System.Logger.Level.INFO, endpoint + " answers its metrics again");
            }
        } catch (IOException | MalformedPageException | RuntimeException e) {
            fail(slot, e instanceof MalformedPageException ? "malformed page: " + e.getMessage() : e.toString());
            onScrapeFailure.accept(endpoint);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            slot.scraping.set(false);
        }
    }

    private static void fail(Slot slot, String error) {
        EndpointStatus before = slot.status.getAndUpdate(
                s -> new EndpointStatus(s.endpoint(), s.metrics(), s.lastGoodNanos(), true, error));
        if (!before.failing()) {
            LOG.log(System.Logger.Level.WARNING, before.endpoint() + " gets no new requests: " + error);
        }
    }

    /** Takes the endpoint out of rotation until its next good scrape (a refused connection). */
    public void markUnreachable(Endpoint endpoint, String why) {
        Slot slot = slots.get(endpoint);
        if (slot != null) {
            fail(slot, why);
        }
    }

    /**
     * Counts a request just sent to {@code endpoint} into its metrics until the next scrape replaces them
     * ({@link EndpointMetrics#withRequestSent}).
     *
     * @param adapter the request's adapter, or null for a base-model request
     */
    public void recordSent(Endpoint endpoint, String adapter) {
        Slot slot = slots.get(endpoint);
        if (slot != null) {
            slot.status.updateAndGet(s -> s.metrics() == null ? s : new EndpointStatus(s.endpoint(),
                    s.metrics().withRequestSent(adapter), s.lastGoodNanos(), s.failing(), s.lastError()));
        }
    }

    /**
     * Counts {@code tokens} of prompt sent to {@code endpoint} until the returned handle's
     * {@link PromptInFlight#answered} (at the answer's first byte, or when the request failed). For an endpoint not
     * in the pool the handle counts nowhere.
     */
    public PromptInFlight promptSent(Endpoint endpoint, long tokens) {
        Slot slot = slots.get(endpoint);
        return new PromptInFlight(slot == null ? new AtomicLong() : slot.promptTokensInFlight, tokens);
    }

    /** Prompt tokens sent to {@code endpoint} and not answered yet; 0 for an endpoint not in the pool. */
    public long promptTokensInFlight(Endpoint endpoint) {
        Slot slot = slots.get(endpoint);
        return slot == null ? 0 : slot.promptTokensInFlight.get();
    }

    /** The endpoints that may get new requests, with their latest metrics, in list order. */
    public List<EndpointState> readyStates() {
        long now = System.nanoTime();
        Map<Endpoint, Slot> current = slots;
        List<EndpointState> ready = new ArrayList<>(current.size());
        for (Endpoint endpoint : order) {
            Slot slot = current.get(endpoint);
            EndpointStatus status = slot == null ? null : slot.status.get();
            if (status != null && status.isReady(now, stalenessNanos)) {
                ready.add(new EndpointState(endpoint, status.metrics(), slot.promptTokensInFlight.get()));
            }
        }
        return ready;
    }

    /** Every endpoint's status, ready or not, in list order. */
    public List<EndpointStatus> statuses() {
        Map<Endpoint, Slot> current = slots;
        List<EndpointStatus> all = new ArrayList<>(current.size());
        for (Endpoint endpoint : order) {
            Slot slot = current.get(endpoint);
            if (slot != null) {
                all.add(slot.status.get());
            }
        }
        return all;
    }

    public boolean isReady(EndpointStatus status) {
        return status.isReady(System.nanoTime(), stalenessNanos);
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
