package dev.patchbay.engine;

import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.AdapterRegistry;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.clock.Clock;
import dev.patchbay.engine.model.Model;
import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.engine.stats.EngineSnapshot;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * An {@link EngineCore} driven by its own thread on a real clock: the model server's engine. The loop steps
 * while there is work and parks otherwise, waking on any command or when an adapter load lands.
 */
public final class Engine implements AutoCloseable {
    private final EngineCore core;
    private final Thread loop;
    private final ExecutorService loaders;
    private volatile boolean stopped;

    private Engine(EngineConfig config, Model model, Clock clock) {
        this.loaders = Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name("adapter-loader-", 0).factory());
        this.loop = Thread.ofPlatform().name("engine-loop").daemon(true).unstarted(this::run);
        this.core = new EngineCore(config, model, clock, loaders, () -> LockSupport.unpark(loop));
    }

    public static Engine start(EngineConfig config, Model model, Clock clock) {
        Engine e = new Engine(config, model, clock);
        e.loop.start();
        return e;
    }

    private void run() {
        while (!stopped) {
            try {
                if (!core.runStep()) {
                    long next = core.nextTimedEventNanos();
                    if (next == Long.MAX_VALUE) LockSupport.park(this);
                    else
                        LockSupport.parkNanos(
                                this, Math.max(1, next - core.clock().nanos()));
                }
            } catch (InterruptedException e) {
                if (stopped) return;
            } catch (RuntimeException | Error e) {
                // A fault in one step must not take the server down; report it and keep serving.
                System.err.println("patchbay engine: step failed: " + e);
                e.printStackTrace(System.err);
                LockSupport.parkNanos(10_000_000);
            }
        }
    }

    public EngineCore core() {
        return core;
    }

    public EngineConfig config() {
        return core.config();
    }

    public Model model() {
        return core.model();
    }

    public long submit(EngineRequest request) throws RequestRejectedException {
        return core.submit(request);
    }

    /** {@link EngineCore#submitIfSlot}. */
    public long submitIfSlot(EngineRequest request) throws RequestRejectedException {
        return core.submitIfSlot(request);
    }

    public void abort(long requestId) {
        core.abort(requestId);
    }

    public CompletableFuture<RegisteredAdapter> loadAdapter(String name, Path path, boolean pinned)
            throws AdapterException {
        return core.loadAdapter(name, path, pinned, true);
    }

    /** Brings a registered adapter into host memory ahead of demand; see {@link EngineCore#preloadAdapter}. */
    public CompletableFuture<RegisteredAdapter> preloadAdapter(String name) throws AdapterException {
        return core.preloadAdapter(name);
    }

    public CompletableFuture<Void> unloadAdapter(String name) throws AdapterException {
        return core.unloadAdapter(name);
    }

    public List<RegisteredAdapter> adapters() {
        return core.adapters();
    }

    /** Every adapter's lifecycle, counts and residency, and the resolver directory. */
    public AdapterRegistry adapterRegistry() {
        return core.adapterRegistry();
    }

    /** What a request's model name refers to: the base model, a loaded adapter, or nothing. */
    public ModelTarget resolve(String model) {
        return core.resolve(model);
    }

    /** The context-length rule requests are checked against. */
    public ContextLimit contextLimit() {
        return core.contextLimit();
    }

    public EngineSnapshot snapshot() {
        return core.snapshot();
    }

    public void addListener(Consumer<EngineSnapshot> listener) {
        core.addListener(listener);
    }

    /** Stops taking requests and waits up to {@code grace} for those in flight to finish. Returns whether they did. */
    public boolean drain(Duration grace) throws InterruptedException {
        core.stopAccepting();
        long deadline = System.nanoTime() + grace.toNanos();
        // Every accepted request ends with exactly one finish, so this also covers requests still in the inbox.
        while (core.snapshot().counters().finished().total() < core.acceptedRequests()) {
            if (System.nanoTime() > deadline) return false;
            Thread.sleep(5);
        }
        return true;
    }

    @Override
    public void close() {
        stopped = true;
        core.stopAccepting();
        LockSupport.unpark(loop);
        loop.interrupt();
        try {
            loop.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        loaders.shutdownNow();
        core.model().close();
    }
}
