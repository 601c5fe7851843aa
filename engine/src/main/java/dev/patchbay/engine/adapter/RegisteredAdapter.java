package dev.patchbay.engine.adapter;

import dev.patchbay.engine.exec.LoadedAdapter;
import dev.patchbay.engine.stats.AdapterState.Level;
import java.util.concurrent.CompletableFuture;

/**
 * An adapter the engine knows by name. Its name, spec and id never change; the residency and request
 * counts below are owned by the engine thread (its cumulative counters live in {@link dev.patchbay.engine.stats.EngineStats}), except {@code unloading}, which API threads set.
 */
public final class RegisteredAdapter {
    private final int id;
    private final AdapterSpec spec;

    volatile boolean unloading;
    volatile boolean pinned;
    Level level = Level.NONE;
    int slot = -1;
    LoadedAdapter loaded;
    PendingLoad pendingLoad;
    /** Completed when the adapter first becomes resident in host memory (or fails to load). */
    final CompletableFuture<RegisteredAdapter> firstResident = new CompletableFuture<>();

    public int running;
    public int waiting;

    public RegisteredAdapter(int id, AdapterSpec spec, boolean pinned) {
        this.id = id;
        this.spec = spec;
        this.pinned = pinned;
    }

    public int id() {
        return id;
    }

    public String name() {
        return spec.name();
    }

    public AdapterSpec spec() {
        return spec;
    }

    public boolean pinned() {
        return pinned;
    }

    public boolean unloading() {
        return unloading;
    }

    /** Refuses new requests from now on; the engine removes the adapter once its requests are done. */
    public void markUnloading() {
        unloading = true;
    }

    /** Completes when the adapter is first resident in host memory, or fails if its load fails. */
    public CompletableFuture<RegisteredAdapter> firstResident() {
        return firstResident;
    }

    public Level level() {
        return level;
    }

    public int slot() {
        return slot;
    }

    public boolean loading() {
        return pendingLoad != null;
    }

    public boolean inFlight() {
        return running + waiting > 0;
    }

    /** Being unloaded and no request left for it: it may leave both tiers, and a load for it is not needed. */
    public boolean drainedForUnload() {
        return unloading && !inFlight();
    }

    @Override
    public String toString() {
        return spec.name() + "#" + id;
    }

    /** A load from storage in progress: done once the future completes and the modeled time has passed. */
    record PendingLoad(CompletableFuture<LoadedAdapter> future, long startNanos, long readyAtNanos) {}
}
