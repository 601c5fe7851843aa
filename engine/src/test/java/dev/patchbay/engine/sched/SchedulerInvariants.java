package dev.patchbay.engine.sched;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.kv.KvCacheManager;
import dev.patchbay.engine.stats.AdapterState.Level;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Checks the scheduler's invariants after every step is scheduled, on the engine thread: the token budget,
 * {@code max_num_seqs}, {@code max_loras} distinct adapters in a step (each in its own slot), KV blocks held exactly as
 * the cache counts them and never over-allocated, no request both running and waiting, the deferred count equal to
 * the waiting requests marked deferred (and no running one marked), and the adapter registry's counts equal to the
 * queues'.
 *
 * <p>{@link #attach} fails the step that broke one, in the thread that drives the engine (the virtual-clock tests);
 * {@link #collecting} keeps the violations for {@link #assertHeld} (an engine on its own thread).
 */
public final class SchedulerInvariants implements Consumer<Scheduler.Plan> {
    private final EngineCore core;
    private final boolean failFast;
    private final List<String> violations = new ArrayList<>();
    private long steps;

    private SchedulerInvariants(EngineCore core, boolean failFast) {
        this.core = core;
        this.failFast = failFast;
    }

    /** Checks every step of {@code core}; the step that breaks an invariant throws an AssertionError naming it. */
    public static SchedulerInvariants attach(EngineCore core) {
        SchedulerInvariants checker = new SchedulerInvariants(core, true);
        core.addPlanListener(checker);
        return checker;
    }

    /** Checks every step of {@code core}, keeping what broke for {@link #assertHeld}. */
    public static SchedulerInvariants collecting(EngineCore core) {
        SchedulerInvariants checker = new SchedulerInvariants(core, false);
        core.addPlanListener(checker);
        return checker;
    }

    /** Steps checked so far. */
    public long steps() {
        return steps;
    }

    public void assertHeld() {
        if (!violations.isEmpty()) throw new AssertionError("scheduler invariants broken: " + violations);
    }

    @Override
    public void accept(Scheduler.Plan plan) {
        steps++;
        List<String> broken = check(plan);
        if (broken.isEmpty()) return;
        String what = "step " + steps + ": " + String.join("; ", broken);
        if (failFast) throw new AssertionError("scheduler invariant broken at " + what);
        if (violations.size() < 20) violations.add(what);
    }

    /** The invariants {@code plan} and the engine's state break now, each named; empty when all hold. */
    public List<String> check(Scheduler.Plan plan) {
        List<String> broken = new ArrayList<>();
        EngineConfig config = core.config();
        Scheduler scheduler = core.scheduler();
        KvCacheManager kv = core.kvCache();

        Set<Request> running = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Request r : scheduler.running) {
            if (!running.add(r)) broken.add("request " + r.id + " is in the running set twice");
            if (r.status != Request.Status.RUNNING) broken.add("request " + r.id + " runs with status " + r.status);
        }
        Set<Request> waiting = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Request r : scheduler.waiting) {
            if (running.contains(r)) broken.add("request " + r.id + " is both running and waiting");
            if (!waiting.add(r)) broken.add("request " + r.id + " is in the waiting queue twice");
            if (r.status != Request.Status.WAITING) broken.add("request " + r.id + " waits with status " + r.status);
            if (r.blocks.numBlocks() > 0)
                broken.add("waiting request " + r.id + " holds " + r.blocks.numBlocks() + " blocks");
        }
        int deferred = 0;
        for (Request r : scheduler.waiting) if (r.deferred) deferred++;
        for (Request r : scheduler.running)
            if (r.deferred) broken.add("running request " + r.id + " is marked deferred");
        if (deferred != scheduler.numDeferred()) {
            broken.add(scheduler.numDeferred() + " requests counted deferred but " + deferred
                    + " waiting ones are marked");
        }
        if (scheduler.running.size() > config.maxNumSeqs()) {
            broken.add(scheduler.running.size() + " requests running, over max_num_seqs " + config.maxNumSeqs());
        }

        int tokens = 0;
        Set<Request> scheduled = Collections.newSetFromMap(new IdentityHashMap<>());
        Set<RegisteredAdapter> stepAdapters = new HashSet<>();
        for (Scheduler.Scheduled s : plan.scheduled()) {
            Request r = s.request();
            tokens += s.numTokens();
            if (!scheduled.add(r)) broken.add("request " + r.id + " is scheduled twice");
            if (!running.contains(r)) broken.add("scheduled request " + r.id + " is not running");
            if (s.numTokens() < 1 || r.numComputed + s.numTokens() > r.numTokens()) {
                broken.add("request " + r.id + " is scheduled for " + s.numTokens() + " tokens with " + r.numComputed
                        + " of " + r.numTokens() + " computed");
            }
            int need = kv.blocksFor(r.numComputed + s.numTokens());
            if (r.blocks.numBlocks() < need) {
                broken.add(
                        "request " + r.id + " holds " + r.blocks.numBlocks() + " blocks for tokens that need " + need);
            }
            if (r.adapter != null) stepAdapters.add(r.adapter);
        }
        if (tokens > config.maxNumBatchedTokens()) {
            broken.add(
                    "the step schedules " + tokens + " tokens, over the token budget " + config.maxNumBatchedTokens());
        }

        if (config.enableLora()) {
            if (stepAdapters.size() > config.maxLoras() || plan.adapters().size() > config.maxLoras()) {
                broken.add("the step uses "
                        + Math.max(stepAdapters.size(), plan.adapters().size()) + " adapters, over max_loras "
                        + config.maxLoras());
            }
            Set<RegisteredAdapter> runningAdapters = new HashSet<>();
            for (Request r : scheduler.running) if (r.adapter != null) runningAdapters.add(r.adapter);
            Map<Integer, RegisteredAdapter> slots = new HashMap<>();
            for (RegisteredAdapter a : runningAdapters) {
                if (a.level() != Level.GPU) broken.add("adapter " + a + " runs outside a batch slot");
                RegisteredAdapter other = slots.put(a.slot(), a);
                if (other != null) broken.add("adapters " + other + " and " + a + " share slot " + a.slot());
            }
        }

        Map<Integer, Integer> holders = new LinkedHashMap<>();
        for (Request r : scheduler.running) {
            Set<Integer> own = new HashSet<>();
            for (int i = 0; i < r.blocks.numBlocks(); i++) {
                int b = r.blocks.blockAt(i);
                if (!own.add(b)) broken.add("request " + r.id + " holds block " + b + " twice");
                holders.merge(b, 1, Integer::sum);
            }
        }
        if (kv.numUsed() > kv.numBlocks()) broken.add(kv.numUsed() + " blocks in use of " + kv.numBlocks());
        if (holders.size() != kv.numUsed()) {
            broken.add(holders.size() + " blocks held by running requests but " + kv.numUsed() + " in use");
        }
        for (var e : holders.entrySet()) {
            int refs = kv.references(e.getKey());
            if (refs != e.getValue()) {
                broken.add(
                        "block " + e.getKey() + " held by " + e.getValue() + " requests has " + refs + " references");
            }
        }

        Map<RegisteredAdapter, int[]> counts = new HashMap<>();
        for (Request r : scheduler.running)
            if (r.adapter != null) counts.computeIfAbsent(r.adapter, a -> new int[2])[0]++;
        for (Request r : scheduler.waiting)
            if (r.adapter != null) counts.computeIfAbsent(r.adapter, a -> new int[2])[1]++;
        for (var e : counts.entrySet()) {
            RegisteredAdapter a = e.getKey();
            int[] c = e.getValue();
            if (a.running() != c[0] || a.waiting() != c[1]) {
                broken.add("adapter " + a + " counts " + a.running() + " running and " + a.waiting()
                        + " waiting but the" + " queues hold " + c[0] + " and " + c[1]);
            }
        }
        for (RegisteredAdapter a : core.adapterRegistry().listed()) {
            if (!counts.containsKey(a) && a.running() + a.waiting() > 0) {
                broken.add("adapter " + a + " counts " + a.running() + " running and " + a.waiting() + " waiting but"
                        + " the queues hold none of its requests");
            }
        }
        return broken;
    }
}
