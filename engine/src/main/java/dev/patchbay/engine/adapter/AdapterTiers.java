package dev.patchbay.engine.adapter;

import dev.patchbay.engine.clock.Clock;
import dev.patchbay.engine.exec.Executor;
import dev.patchbay.engine.exec.LoadedAdapter;
import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineStats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.function.BiConsumer;

/**
 * The two LRU tiers an adapter can live in: batch slots ({@code max_loras}) and host memory
 * ({@code max_cpu_loras}, a superset of the slots). Storage loads run off the engine loop; moving into a
 * slot happens when a request is scheduled. Pinned adapters and adapters the current step uses are never
 * evicted. The {@link AdapterRegistry}'s, used from the engine thread only.
 */
final class AdapterTiers {
    private final int slotCapacity;
    private final int hostCapacity;
    private final int maxConcurrentLoads;
    private final Executor executor;
    private final ExecutorService loaderPool;
    private final Clock clock;
    private final Runnable wakeEngine;

    /** Host-resident adapters, least recently used first; includes those in slots. */
    private final LinkedHashSet<RegisteredAdapter> host = new LinkedHashSet<>();
    /** Adapters in slots, least recently used first. */
    private final LinkedHashSet<RegisteredAdapter> slotLru = new LinkedHashSet<>();

    private final RegisteredAdapter[] slotOwner;
    private final List<RegisteredAdapter> loading = new ArrayList<>();

    private final EngineStats stats;
    private boolean changed = true;

    AdapterTiers(
            int slotCapacity,
            int hostCapacity,
            int maxConcurrentLoads,
            Executor executor,
            ExecutorService loaderPool,
            Clock clock,
            Runnable wakeEngine,
            EngineStats stats) {
        this.stats = stats;
        this.slotCapacity = slotCapacity;
        this.hostCapacity = hostCapacity;
        this.maxConcurrentLoads = maxConcurrentLoads;
        this.executor = executor;
        this.loaderPool = loaderPool;
        this.clock = clock;
        this.wakeEngine = wakeEngine;
        this.slotOwner = new RegisteredAdapter[slotCapacity];
    }

    int slotsUsed() {
        return slotLru.size();
    }

    int hostResident() {
        return host.size();
    }

    Set<RegisteredAdapter> hostResidents() {
        return host;
    }

    List<RegisteredAdapter> loadingAdapters() {
        return loading;
    }

    /** Whether residency changed since the last call (the snapshot's adapter list must be rebuilt). */
    boolean takeChanged() {
        boolean c = changed;
        changed = false;
        return c;
    }

    boolean isHostResident(RegisteredAdapter a) {
        return a.level != Level.NONE;
    }

    /**
     * Starts loading {@code a} from storage unless it is resident, loading, or the loader is busy. An adapter being
     * unloaded is still loaded while requests admitted before the unload wait for it: they must get their answer.
     */
    void requestLoad(RegisteredAdapter a) {
        if (a.level != Level.NONE || a.pendingLoad != null || a.drainedForUnload()) return;
        if (loading.size() >= maxConcurrentLoads) return;
        long start = clock.nanos();
        long readyAt = start + executor.modeledLoadNanos(a.spec());
        CompletableFuture<LoadedAdapter> future;
        if (clock.isVirtual()) {
            // On virtual time the load's duration is modeled: do the work now so runs stay deterministic.
            future = new CompletableFuture<>();
            try {
                future.complete(executor.loadAdapter(a.spec()));
            } catch (Exception | Error e) {
                future.completeExceptionally(e);
            }
        } else {
            future = CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return executor.loadAdapter(a.spec());
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    },
                    loaderPool);
            future.whenComplete((r, e) -> wakeEngine.run());
        }
        a.pendingLoad = new RegisteredAdapter.PendingLoad(future, start, readyAt);
        loading.add(a);
        changed = true;
    }

    /**
     * Earliest future time a pending load's modeled duration ends, or Long.MAX_VALUE. Loads that wait for real
     * work wake the engine themselves; loads waiting for host room are retried by the steps that free it.
     */
    long nextLoadReadyNanos() {
        long now = clock.nanos();
        long t = Long.MAX_VALUE;
        for (RegisteredAdapter a : loading) {
            long ready = a.pendingLoad.readyAtNanos();
            if (ready > now) t = Math.min(t, ready);
        }
        return t;
    }

    /**
     * Admits finished loads into host memory. {@code onFailure} receives adapters whose load failed, with the cause.
     * Returns whether anything was admitted.
     */
    boolean pollLoads(List<AdapterLoad> events, BiConsumer<RegisteredAdapter, Throwable> onFailure) {
        boolean admitted = false;
        long now = clock.nanos();
        for (Iterator<RegisteredAdapter> it = loading.iterator(); it.hasNext(); ) {
            RegisteredAdapter a = it.next();
            RegisteredAdapter.PendingLoad p = a.pendingLoad;
            if (!p.future().isDone() || now < p.readyAtNanos()) continue;
            LoadedAdapter loaded;
            try {
                loaded = p.future().join();
            } catch (RuntimeException e) {
                it.remove();
                a.pendingLoad = null;
                stats.loadFailed();
                changed = true;
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                if (cause instanceof UncheckedIOException u) cause = u.getCause();
                a.firstResident.completeExceptionally(cause);
                onFailure.accept(a, cause);
                continue;
            }
            if (a.drainedForUnload()) {
                it.remove();
                a.pendingLoad = null;
                executor.release(loaded);
                changed = true;
                continue;
            }
            if (!makeHostRoom()) continue; // every resident adapter is busy: retry on a later step
            it.remove();
            a.pendingLoad = null;
            a.loaded = loaded;
            a.level = Level.CPU;
            host.add(a);
            stats.loadedFromDisk();
            events.add(new AdapterLoad(a.name(), AdapterLoad.Source.DISK, (now - p.startNanos()) / 1e9));
            changed = true;
            admitted = true;
            a.firstResident.complete(a);
        }
        return admitted;
    }

    /**
     * Host memory has a free place, or an unpinned resident adapter with no request that could leave for a new one.
     * When it has neither, a finished load waits until a resident adapter's requests are done.
     */
    boolean hostHasRoom() {
        if (host.size() < hostCapacity) return true;
        for (RegisteredAdapter a : host) {
            if (!a.pinned && !a.inFlight()) return true;
        }
        return false;
    }

    /**
     * Evicts the least recently used idle adapter if host memory is full; false if none can go. Adapters with
     * queued requests stay: evicting them would only make those requests reload it (and two loads landing
     * together could evict each other forever).
     */
    private boolean makeHostRoom() {
        if (host.size() < hostCapacity) return true;
        RegisteredAdapter victim = null;
        for (RegisteredAdapter a : host) {
            if (!a.pinned && !a.inFlight()) {
                victim = a;
                break;
            }
        }
        if (victim == null) return false;
        evictFromHost(victim);
        stats.evictedFromHost();
        return true;
    }

    private void evictFromHost(RegisteredAdapter a) {
        if (a.level == Level.GPU) freeSlot(a);
        host.remove(a);
        executor.release(a.loaded);
        a.loaded = null;
        a.level = Level.NONE;
        changed = true;
    }

    private void freeSlot(RegisteredAdapter a) {
        executor.deactivate(a.slot);
        slotOwner[a.slot] = null;
        slotLru.remove(a);
        a.slot = -1;
        a.level = Level.CPU;
        changed = true;
    }

    /** Whether {@code a} could get a slot this step without evicting an adapter the step uses or a pinned one. */
    boolean canTakeSlot(RegisteredAdapter a, Set<RegisteredAdapter> stepAdapters) {
        if (a.level == Level.GPU || slotLru.size() < slotCapacity) return true;
        for (RegisteredAdapter s : slotLru) if (!s.pinned && !stepAdapters.contains(s)) return true;
        return false;
    }

    /**
     * Puts a host-resident adapter in a slot (evicting the least recently used one the step does not use) and
     * marks it recently used in both tiers. Returns the modeled nanos of the copy; {@code events} gets the load.
     */
    long activate(RegisteredAdapter a, Set<RegisteredAdapter> stepAdapters, List<AdapterLoad> events) {
        touch(a);
        if (a.level == Level.GPU) return 0;
        if (a.level != Level.CPU) throw new IllegalStateException(a + " is not in host memory");
        int slot = freeSlotIndex();
        if (slot < 0) {
            RegisteredAdapter victim = null;
            for (RegisteredAdapter s : slotLru)
                if (!s.pinned && !stepAdapters.contains(s)) {
                    victim = s;
                    break;
                }
            if (victim == null) throw new IllegalStateException("no slot can be freed for " + a);
            slot = victim.slot;
            freeSlot(victim);
            stats.evictedFromSlot();
        }
        long t0 = clock.nanos();
        long modeled = executor.activate(slot, a.loaded);
        long took = modeled > 0 ? modeled : clock.nanos() - t0;
        slotOwner[slot] = a;
        a.slot = slot;
        a.level = Level.GPU;
        slotLru.add(a);
        stats.loadedIntoSlot();
        events.add(new AdapterLoad(a.name(), AdapterLoad.Source.CPU, took / 1e9));
        changed = true;
        return modeled;
    }

    private int freeSlotIndex() {
        for (int i = 0; i < slotOwner.length; i++) if (slotOwner[i] == null) return i;
        return -1;
    }

    private void touch(RegisteredAdapter a) {
        if (host.remove(a)) host.add(a);
        if (slotLru.remove(a)) slotLru.add(a);
    }

    /** Drops an adapter from both tiers (unload); a load in flight is discarded when it lands. */
    void remove(RegisteredAdapter a) {
        if (a.level != Level.NONE) evictFromHost(a);
        changed = true;
    }

    /** For tests and invariants: the adapters in slots, least recently used first. */
    List<RegisteredAdapter> slotOrder() {
        return List.copyOf(slotLru);
    }

    /** For tests and invariants: host-resident adapters, least recently used first. */
    List<RegisteredAdapter> hostOrder() {
        return List.copyOf(host);
    }
}
