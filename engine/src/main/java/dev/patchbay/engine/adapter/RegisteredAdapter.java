package dev.patchbay.engine.adapter;

import dev.patchbay.engine.exec.LoadedAdapter;
import dev.patchbay.engine.stats.AdapterState.Level;
import java.util.concurrent.CompletableFuture;

/**
 * An adapter the engine knows by name. Its name, spec and id never change; its lifecycle, residency and request
 * counts are the {@link AdapterRegistry}'s to change (its cumulative counters live in
 * {@link dev.patchbay.engine.stats.EngineStats}). Residency and counts change on the engine thread; the unloading
 * and unloaded marks, on any thread.
 */
public final class RegisteredAdapter {
    /** Where an adapter is in its life, as {@link #phase} reports it. */
    public enum Phase {
        /** Known by name, in neither tier (never loaded, or evicted from host memory). */
        REGISTERED,
        /** Being read from storage into host memory. */
        LOADING,
        /** In host memory, not in a batch slot. */
        IN_HOST,
        /** In a batch slot (and in host memory). */
        IN_SLOT,
        /** Refusing new requests while those in flight finish. */
        UNLOADING,
        /** Gone from both tiers and from the registry. */
        UNLOADED
    }

    private final int id;
    private final AdapterSpec spec;

    private volatile boolean unloading;
    private volatile boolean unloaded;
    final boolean pinned;
    Level level = Level.NONE;
    int slot = -1;
    LoadedAdapter loaded;
    PendingLoad pendingLoad;
    /** Completed when the adapter first becomes resident in host memory (or fails to load). */
    final CompletableFuture<RegisteredAdapter> firstResident = new CompletableFuture<>();

    private int running;
    private int waiting;

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

    /** Refuses new requests from now on; the registry removes the adapter once its requests are done. */
    void markUnloading() {
        unloading = true;
    }

    void markUnloaded() {
        unloaded = true;
    }

    public Phase phase() {
        if (unloaded) return Phase.UNLOADED;
        if (unloading) return Phase.UNLOADING;
        if (pendingLoad != null) return Phase.LOADING;
        return switch (level) {
            case GPU -> Phase.IN_SLOT;
            case CPU -> Phase.IN_HOST;
            case NONE -> Phase.REGISTERED;
        };
    }

    /** Requests for it in the running set. */
    public int running() {
        return running;
    }

    /** Requests for it in the waiting queue. */
    public int waiting() {
        return waiting;
    }

    void queued() {
        waiting++;
    }

    void scheduled() {
        waiting--;
        running++;
    }

    void preempted() {
        running--;
        waiting++;
    }

    void left(boolean wasRunning) {
        if (wasRunning) running--;
        else waiting--;
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
