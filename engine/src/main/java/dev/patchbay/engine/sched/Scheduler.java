package dev.patchbay.engine.sched;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.adapter.AdapterRegistry;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.kv.KvCacheManager;
import dev.patchbay.engine.kv.KvCacheManager.CachedPrefix;
import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.EngineStats;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Continuous batching with vLLM v1's rules. Each step: running requests first (a decode token, or the next
 * prompt chunk), preempting the newest running request by recompute when KV blocks run out; then, if nothing
 * was preempted, waiting requests in arrival order while the token budget, {@code max_num_seqs} and free blocks
 * allow. LoRA rule: the step's adapter set starts as the running requests' adapters; a waiting request whose
 * adapter is not in the set is skipped, keeping its place at the head, once the set holds {@code max_loras}
 * adapters; the scan goes on, so requests for adapters in the set and base-model requests are still admitted.
 * A request whose adapter is not yet in host memory is skipped the same way while its load runs off the loop, and
 * its adapter counts toward the step's set meanwhile, so later requests of other adapters do not take its slot; not
 * while host memory has no room for it, since that room comes only from requests of resident adapters that run.
 * Blocks and cached prefixes come from the {@link KvCacheManager}; residency, slots and adapter counts are the
 * {@link AdapterRegistry}'s, told of every request that is queued, scheduled, preempted or gone.
 *
 * <p>Deferred requests (vLLM's skipped waiting queue, {@code reason="deferred"} of
 * {@code vllm:num_requests_waiting_by_reason}): waiting requests that the last schedule pass to reach them skipped for
 * their adapter, under the LoRA budget or while the adapter loads. A request stays deferred until a later pass reaches
 * it again (and admits it, skips it again, or finds no KV blocks for it) or it leaves the queue; a pass that stops
 * early, or does not look at the queue (a step that preempts, {@code max_num_seqs} reached), leaves the marks as they
 * are, as vLLM leaves its skipped queue. The rest of the queue waits for capacity.
 */
public final class Scheduler {
    /** Waiting requests whose adapters are fetched ahead of their turn. */
    private static final int PREFETCH_WINDOW = 64;

    private final EngineConfig config;
    private final KvCacheManager kv;
    private final AdapterRegistry adapters;
    final ArrayDeque<Request> waiting = new ArrayDeque<>();
    final ArrayList<Request> running = new ArrayList<>();
    /** Waiting requests marked {@link Request#deferred}. */
    private int numDeferred;

    private final EngineStats stats;

    /** One request's part of a step: {@code numTokens} tokens starting at its computed position. */
    public record Scheduled(Request request, int numTokens) {}

    /** What a step will run; {@code activationNanos} is the modeled time of moving adapters into slots. */
    public record Plan(
            List<Scheduled> scheduled, List<Request> preempted, Set<RegisteredAdapter> adapters, long activationNanos) {
        public boolean isEmpty() {
            return scheduled.isEmpty();
        }
    }

    Scheduler(EngineConfig config, KvCacheManager kv, AdapterRegistry adapters, EngineStats stats) {
        this.config = config;
        this.kv = kv;
        this.adapters = adapters;
        this.stats = stats;
    }

    Plan schedule(long now, List<AdapterLoad> loads) {
        int budget = config.maxNumBatchedTokens();
        List<Scheduled> scheduled = new ArrayList<>();
        List<Request> preempted = new ArrayList<>();
        Set<RegisteredAdapter> stepAdapters = new HashSet<>();
        for (Request r : running) if (r.adapter != null) stepAdapters.add(r.adapter);

        int i = 0;
        while (i < running.size() && budget > 0) {
            Request r = running.get(i);
            int n = Math.min(r.numTokens() - r.numComputed, budget);
            boolean fits = true;
            while (!kv.allocateSlots(r.blocks, CachedPrefix.NONE, r.numComputed + n)) {
                Request victim = running.remove(running.size() - 1);
                preempt(victim);
                preempted.add(victim);
                if (victim == r) {
                    fits = false;
                    break;
                }
            }
            if (!fits) break;
            scheduled.add(new Scheduled(r, n));
            budget -= n;
            i++;
        }
        // Adapters of preempted requests may have left the running set.
        if (!preempted.isEmpty()) {
            stepAdapters.clear();
            for (Request r : running) if (r.adapter != null) stepAdapters.add(r.adapter);
        }

        long activationNanos = 0;
        if (preempted.isEmpty()) {
            ArrayDeque<Request> skipped = new ArrayDeque<>();
            Set<RegisteredAdapter> loading = new HashSet<>();
            while (!waiting.isEmpty() && budget > 0 && running.size() < config.maxNumSeqs()) {
                Request r = waiting.peekFirst();
                RegisteredAdapter a = r.adapter;
                setDeferred(r, false);
                if (a != null && !admissible(a, stepAdapters, loading)) {
                    setDeferred(r, true);
                    skipped.addLast(waiting.pollFirst());
                    continue;
                }
                // Prompt log probabilities need logits at every prompt position, so such a request (as in vLLM)
                // computes its whole prompt rather than starting from a cached prefix.
                CachedPrefix prefix = r.params.promptLogprobs() == null
                        ? kv.cachedPrefix(r.blocks, r.numTokens())
                        : CachedPrefix.NONE;
                int cachedTokens = prefix.numBlocks() * kv.blockSize();
                int n = Math.min(r.numTokens() - cachedTokens, budget);
                if (!kv.allocateSlots(r.blocks, prefix, cachedTokens + n)) break;
                r.numComputed = cachedTokens;
                waiting.pollFirst();
                if (a != null) {
                    activationNanos += adapters.requestScheduled(a, stepAdapters, loads);
                    stepAdapters.add(a);
                }
                r.status = Request.Status.RUNNING;
                if (r.firstScheduledNanos < 0) r.firstScheduledNanos = now;
                running.add(r);
                scheduled.add(new Scheduled(r, n));
                budget -= n;
            }
            while (!skipped.isEmpty()) waiting.addFirst(skipped.pollLast());
        }
        prefetchAdapters();
        return new Plan(scheduled, preempted, stepAdapters, activationNanos);
    }

    /**
     * A LoRA request may start now if its adapter is in host memory and the step can give it a slot. An adapter
     * still loading for an earlier request keeps a place among the step's {@code max_loras} ({@code loading}):
     * were the load synchronous, as in vLLM, that earlier request would hold the slot, and a later request of
     * another adapter must not take it and leave the earlier one waiting for as long as the slots stay busy.
     */
    private boolean admissible(
            RegisteredAdapter a, Set<RegisteredAdapter> stepAdapters, Set<RegisteredAdapter> loading) {
        if (!adapters.isHostResident(a)) {
            adapters.requestLoad(a);
            // A load that cannot enter host memory holds no place: the room comes only from resident adapters whose
            // requests run and finish, and holding their slots would keep them from running (a deadlock).
            if (!stepAdapters.contains(a) && adapters.hostHasRoom()) loading.add(a);
            return false;
        }
        if (stepAdapters.contains(a)) return true;
        return stepAdapters.size() + loading.size() < config.maxLoras() && adapters.canTakeSlot(a, stepAdapters);
    }

    private void prefetchAdapters() {
        int seen = 0;
        for (Request r : waiting) {
            if (++seen > PREFETCH_WINDOW) break;
            if (r.adapter != null && !adapters.isHostResident(r.adapter)) adapters.requestLoad(r.adapter);
        }
    }

    private void setDeferred(Request r, boolean deferred) {
        if (r.deferred == deferred) return;
        r.deferred = deferred;
        numDeferred += deferred ? 1 : -1;
    }

    /** Frees a running request's blocks and puts it back at the head of the queue, to be recomputed. */
    private void preempt(Request r) {
        kv.free(r.blocks);
        r.numComputed = 0;
        r.status = Request.Status.WAITING;
        if (r.adapter != null) adapters.requestPreempted(r.adapter);
        waiting.addFirst(r);
        stats.preempted();
    }

    /** Takes a request out of whichever queue holds it (finish or abort). */
    void remove(Request r) {
        if (r.status == Request.Status.RUNNING) {
            running.remove(r);
            if (r.adapter != null) adapters.requestLeft(r.adapter, true);
        } else if (r.status == Request.Status.WAITING) {
            waiting.remove(r);
            setDeferred(r, false);
            if (r.adapter != null) adapters.requestLeft(r.adapter, false);
        }
        kv.free(r.blocks);
    }

    void enqueue(Request r) {
        if (r.adapter != null) adapters.requestQueued(r.adapter);
        waiting.addLast(r);
    }

    public int numRunning() {
        return running.size();
    }

    public int numWaiting() {
        return waiting.size();
    }

    /**
     * Prompt tokens the waiting and running requests still have to compute before their next token (a preempted
     * request's output too): a fresh prompt, the rest of a chunked prefill; a decoding request has none.
     */
    public long tokensToPrefill() {
        long sum = 0;
        for (Request r : waiting) sum += toPrefill(r);
        for (Request r : running) sum += toPrefill(r);
        return sum;
    }

    private static int toPrefill(Request r) {
        int pending = r.prompt.length + r.numOutput - r.numComputed;
        return pending > 1 ? pending : 0;
    }

    /** Waiting requests deferred for their adapter (see the class comment); at most {@link #numWaiting()}. */
    public int numDeferred() {
        return numDeferred;
    }
}
