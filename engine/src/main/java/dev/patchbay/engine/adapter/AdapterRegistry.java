package dev.patchbay.engine.adapter;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.adapter.AdapterException.Kind;
import dev.patchbay.engine.clock.Clock;
import dev.patchbay.engine.exec.Executor;
import dev.patchbay.engine.model.ModelConfig;
import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineStats;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Every adapter the engine knows, from registration to unload: the names requests may use, the resolver directory
 * unknown names are looked up in, each adapter's running and waiting requests, and its place in the two LRU tiers
 * ({@link AdapterTiers}: batch slots and host memory). The scheduler and the engine core ask it and report to it;
 * nothing else changes an adapter's state.
 *
 * <p>An adapter's life ({@link RegisteredAdapter.Phase}): registered; loading from storage, off the engine loop; in
 * host memory; in a batch slot once a request of it is scheduled; back to host memory or out of both tiers when
 * evicted (least recently used, never while pinned or in use); unloading once an unload is asked (new requests are
 * refused, those in flight finish, a load they wait for still runs); unloaded when it has left both tiers.
 *
 * <p>Registration, unloads and name lookups come from any thread; the rest runs on the engine thread, to which the
 * registry hands other threads' changes ({@code onEngineThread}) so they apply in order with the engine's commands.
 */
public final class AdapterRegistry {
    /** Confines a requested adapter path: its real path, NOT_FOUND when nothing is there, INVALID when not allowed. */
    @FunctionalInterface
    public interface PathCheck {
        Path confine(String requested) throws AdapterException;
    }

    private record ResolverDirectory(Path dir, PathCheck check) {}

    private final EngineConfig config;
    private final ModelConfig base;
    private final EngineStats stats;
    private final Consumer<Runnable> onEngineThread;
    private final AdapterTiers tiers;

    // Any thread.
    private final ConcurrentHashMap<String, RegisteredAdapter> servable = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, RegisteredAdapter> draining = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger(1);
    private volatile ResolverDirectory resolver;

    // Engine thread.
    /** Loads asked for at registration, before any request. */
    private final List<RegisteredAdapter> wantedLoads = new ArrayList<>();
    /** Loads of registered adapters asked for ahead of demand, each with whoever waits for it to be resident. */
    private final List<Preload> preloads = new ArrayList<>();

    private static final class Preload {
        final RegisteredAdapter adapter;
        final CompletableFuture<RegisteredAdapter> done;
        boolean started;

        Preload(RegisteredAdapter adapter, CompletableFuture<RegisteredAdapter> done) {
            this.adapter = adapter;
            this.done = done;
        }
    }

    private final Map<RegisteredAdapter, CompletableFuture<Void>> unloads = new LinkedHashMap<>();
    /** Adapters with requests running or waiting, kept as counts change so snapshots need not walk the queues. */
    private final LinkedHashSet<RegisteredAdapter> inFlight = new LinkedHashSet<>();

    /**
     * @param onEngineThread runs a change on the engine thread at the start of its next step, waking it
     * @param wakeEngine     wakes the engine when a load from storage lands
     */
    public AdapterRegistry(
            EngineConfig config,
            ModelConfig base,
            Executor executor,
            ExecutorService loaderPool,
            Clock clock,
            EngineStats stats,
            Consumer<Runnable> onEngineThread,
            Runnable wakeEngine) {
        this.config = config;
        this.base = base;
        this.stats = stats;
        this.onEngineThread = onEngineThread;
        this.tiers = new AdapterTiers(
                config.maxLoras(),
                config.maxCpuLoras(),
                config.maxConcurrentAdapterLoads(),
                executor,
                loaderPool,
                clock,
                wakeEngine,
                stats);
    }

    // ---------------------------------------------------------------- names (any thread)

    /**
     * Validates and registers an adapter; the future completes when it is resident in host memory ({@code loadNow}
     * or {@code pinned}), else at once. Throws NOT_FOUND when the path holds no adapter, INVALID when it breaks a
     * rule, CONFLICT for a taken name or with LoRA off.
     */
    public CompletableFuture<RegisteredAdapter> register(String name, Path path, boolean pinned, boolean loadNow)
            throws AdapterException {
        if (!config.enableLora()) throw new AdapterException(Kind.CONFLICT, "LoRA is not enabled (--enable-lora)");
        if (servable.containsKey(name) || draining.containsKey(name)) throw alreadyLoaded(name);
        // At least one host place must stay free of pins, or no other adapter could ever be loaded.
        if (pinned && pinnedCount() + 1 > config.maxCpuLoras() - 1) {
            throw new AdapterException(
                    Kind.CONFLICT,
                    "Cannot pin '" + name + "': at most max_cpu_loras - 1 = " + (config.maxCpuLoras() - 1)
                            + " adapters can be pinned");
        }
        var spec = PeftReader.read(name, path, base, config.maxLoraRank());
        RegisteredAdapter a = new RegisteredAdapter(nextId.getAndIncrement(), spec, pinned);
        if (servable.putIfAbsent(name, a) != null || draining.containsKey(name)) {
            servable.remove(name, a);
            throw alreadyLoaded(name);
        }
        if (loadNow || pinned) {
            onEngineThread.accept(() -> wantedLoads.add(a));
        } else {
            a.firstResident.complete(a);
        }
        return a.firstResident;
    }

    /**
     * Brings a registered adapter into host memory ahead of its first request (what vLLM's {@code load_inplace} on a
     * loaded name asks for); the future completes once it is resident, at once when it is already. Throws NOT_FOUND
     * for a name that is not registered (or is being unloaded).
     */
    public CompletableFuture<RegisteredAdapter> preload(String name) throws AdapterException {
        RegisteredAdapter a = servable(name);
        if (a == null) throw new AdapterException(Kind.NOT_FOUND, "The lora adapter '" + name + "' cannot be found.");
        CompletableFuture<RegisteredAdapter> done = new CompletableFuture<>();
        onEngineThread.accept(() -> preloads.add(new Preload(a, done)));
        return done;
    }

    private static AdapterException alreadyLoaded(String name) {
        return new AdapterException(Kind.CONFLICT, "The lora adapter '" + name + "' has already been loaded.");
    }

    private long pinnedCount() {
        return servable.values().stream().filter(RegisteredAdapter::pinned).count();
    }

    /**
     * Unloads an adapter: new requests for it are refused at once; requests in flight finish; then it leaves both
     * tiers and the future completes.
     */
    public CompletableFuture<Void> unload(String name) throws AdapterException {
        RegisteredAdapter a = servable.remove(name);
        if (a == null) throw new AdapterException(Kind.NOT_FOUND, "The lora adapter '" + name + "' cannot be found.");
        a.markUnloading();
        draining.put(name, a);
        CompletableFuture<Void> done = new CompletableFuture<>();
        onEngineThread.accept(() -> unloads.put(a, done));
        return done;
    }

    /** The adapter requests may name, or null (LoRA off, never registered, or being unloaded). */
    public RegisteredAdapter servable(String name) {
        return config.enableLora() ? servable.get(name) : null;
    }

    /** Adapters that requests may name, in registration order. */
    public List<RegisteredAdapter> list() {
        List<RegisteredAdapter> list = new ArrayList<>(servable.values());
        list.sort(Comparator.comparingInt(RegisteredAdapter::id));
        return list;
    }

    // ---------------------------------------------------------------- the resolver directory (any thread)

    /**
     * Looks up unknown names as {@code dir/<name>} from now on ({@code --lora-resolver-dir}); each path must pass
     * {@code check} (the directories adapters may come from).
     */
    public void useResolverDirectory(Path dir, PathCheck check) {
        resolver = new ResolverDirectory(dir, check);
    }

    /**
     * Registers {@code name} from the resolver directory. Returns a future that completes once requests may use it,
     * or null when there is no resolver directory, LoRA is off, the name is not a plain directory name, or the
     * directory holds nothing by that name. Throws INVALID for an adapter there that breaks a rule.
     */
    public CompletableFuture<?> resolve(String name) throws AdapterException {
        ResolverDirectory r = resolver;
        if (r == null || !config.enableLora() || !name.matches("[A-Za-z0-9._-]+") || name.startsWith(".")) return null;
        try {
            return register(name, r.check().confine(r.dir().resolve(name).toString()), false, false);
        } catch (AdapterException e) {
            return switch (e.kind()) {
                case NOT_FOUND -> null;
                case CONFLICT -> CompletableFuture.completedFuture(null); // registered meanwhile by another request
                case INVALID -> throw e;
            };
        }
    }

    // ---------------------------------------------------------------- lifecycle (engine thread)

    /** Starts the loads asked for at registration; completes the futures of adapters already resident. */
    public void startWantedLoads() {
        for (var it = wantedLoads.iterator(); it.hasNext(); ) {
            RegisteredAdapter a = it.next();
            if (a.unloading() || tiers.isHostResident(a)) {
                it.remove();
                if (tiers.isHostResident(a)) a.firstResident.complete(a);
                continue;
            }
            tiers.requestLoad(a);
            if (a.loading()) it.remove();
        }
    }

    /**
     * Completes the preloads whose adapters are resident (or failed, or are being unloaded) and starts the others'
     * loads; called after finished loads are admitted, so a preload completes in the step its load lands.
     */
    public void settlePreloads() {
        for (var it = preloads.iterator(); it.hasNext(); ) {
            Preload p = it.next();
            RegisteredAdapter a = p.adapter;
            if (a.level() != Level.NONE) {
                p.done.complete(a);
                it.remove();
            } else if (a.unloading()) {
                p.done.completeExceptionally(new AdapterException(Kind.NOT_FOUND, "unloaded"));
                it.remove();
            } else if (p.started && !a.loading()) {
                // Its load ended without making it resident: the load from storage failed.
                p.done.completeExceptionally(new AdapterException(Kind.INVALID, "loading '" + a.name() + "' failed"));
                it.remove();
            } else if (!p.started) {
                tiers.requestLoad(a);
                p.started = a.loading();
            }
        }
    }

    /**
     * Admits loads from storage that finished into host memory, evicting the least recently used idle adapter when
     * it is full; {@code events} gets each load, {@code onFailure} each adapter whose load failed.
     */
    public void admitFinishedLoads(List<AdapterLoad> events, BiConsumer<RegisteredAdapter, Throwable> onFailure) {
        tiers.pollLoads(events, onFailure);
    }

    /** Completes the unloads whose adapters have no request left. Returns whether any completed. */
    public boolean completeUnloads() {
        boolean completed = false;
        for (var it = unloads.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            RegisteredAdapter a = e.getKey();
            if (!a.drainedForUnload()) continue;
            tiers.remove(a);
            if (a.loading()) continue; // the load lands later and is discarded; wait for it
            draining.remove(a.name(), a);
            stats.forget(a);
            a.markUnloaded();
            a.firstResident.completeExceptionally(new AdapterException(Kind.NOT_FOUND, "unloaded"));
            it.remove();
            e.getValue().complete(null);
            completed = true;
        }
        return completed;
    }

    /** The earliest future time a load's modeled duration ends, or Long.MAX_VALUE. */
    public long nextLoadReadyNanos() {
        return tiers.nextLoadReadyNanos();
    }

    /** Whether residency changed since the last call (the snapshot's adapter list must be rebuilt). */
    public boolean takeChanged() {
        return tiers.takeChanged();
    }

    // ---------------------------------------------------------------- requests (engine thread)

    /** A request for {@code a} joined the waiting queue: its load starts if it is not in host memory. */
    public void requestQueued(RegisteredAdapter a) {
        boolean resident = tiers.isHostResident(a);
        stats.hostLookup(resident);
        if (!resident) tiers.requestLoad(a);
        a.queued();
        inFlight.add(a);
    }

    /**
     * A waiting request for {@code a} is scheduled: the adapter moves into a slot if it is not in one, evicting the
     * least recently used slot the step does not use. Returns the modeled nanos of that move; {@code events} gets it.
     */
    public long requestScheduled(RegisteredAdapter a, Set<RegisteredAdapter> stepAdapters, List<AdapterLoad> events) {
        stats.slotLookup(a.level() == Level.GPU);
        long nanos = tiers.activate(a, stepAdapters, events);
        a.scheduled();
        return nanos;
    }

    /** A running request for {@code a} went back to the waiting queue. */
    public void requestPreempted(RegisteredAdapter a) {
        a.preempted();
    }

    /** A request for {@code a} left the running set or the waiting queue (finished or aborted). */
    public void requestLeft(RegisteredAdapter a, boolean wasRunning) {
        a.left(wasRunning);
        if (!a.inFlight()) inFlight.remove(a);
    }

    // ---------------------------------------------------------------- what the scheduler asks (engine thread)

    public boolean isHostResident(RegisteredAdapter a) {
        return tiers.isHostResident(a);
    }

    /** Starts loading {@code a} from storage unless it is resident, loading, or the loader is busy. */
    public void requestLoad(RegisteredAdapter a) {
        tiers.requestLoad(a);
    }

    /** Host memory has a free place, or an idle unpinned adapter that could leave for a new one. */
    public boolean hostHasRoom() {
        return tiers.hostHasRoom();
    }

    /** Whether {@code a} could get a slot this step without evicting an adapter the step uses or a pinned one. */
    public boolean canTakeSlot(RegisteredAdapter a, Set<RegisteredAdapter> stepAdapters) {
        return tiers.canTakeSlot(a, stepAdapters);
    }

    // ---------------------------------------------------------------- what snapshots and checks read (engine thread)

    /** Adapters resident in a tier, loading, or with requests in flight: those a snapshot lists. */
    public Collection<RegisteredAdapter> listed() {
        Set<RegisteredAdapter> listed = new LinkedHashSet<>(tiers.hostResidents());
        listed.addAll(tiers.loadingAdapters());
        listed.addAll(inFlight);
        return listed;
    }

    public int slotsUsed() {
        return tiers.slotsUsed();
    }

    /** Adapters in host memory, those in slots included. */
    public int hostResident() {
        return tiers.hostResident();
    }

    /** The adapters in slots, least recently used first. */
    public List<RegisteredAdapter> slotOrder() {
        return tiers.slotOrder();
    }

    /** Host-resident adapters, least recently used first. */
    public List<RegisteredAdapter> hostOrder() {
        return tiers.hostOrder();
    }
}
