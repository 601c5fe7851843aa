package dev.patchbay.router.scrape;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the router knows about one model server: what its page said ({@link PageMetrics}), with what follows from it
 * for picking worked out once, when the page is read (or the router adds its own request to it), not at every pick:
 * the adapters in slots and every adapter's {@link LoraPlacement}, keyed by id in the {@link AdapterIds} table of the
 * pool the metrics belong to. Two metrics are equal when their pages are and they use the same table.
 */
public final class EndpointMetrics {
    /** An idle server that reported nothing about LoRA. */
    public static final EndpointMetrics EMPTY = builder().build();

    private final PageMetrics page;
    private final AdapterIds table;
    private final SlotAdapters slotAdapters;
    private final Placements placements;

    public EndpointMetrics(PageMetrics page, AdapterIds table) {
        this.page = page;
        this.table = table;
        this.slotAdapters = SlotAdapters.of(page, table);
        this.placements = Placements.of(page, table);
    }

    /** What the page said. */
    public PageMetrics page() {
        return page;
    }

    /** The adapter id table the derived parts are keyed in: a pool's own, or {@link AdapterIds#UNPOOLED}. */
    public AdapterIds table() {
        return table;
    }

    public String modelName() {
        return page.modelName();
    }

    public int waitingRequests() {
        return page.waitingRequests();
    }

    public int runningRequests() {
        return page.runningRequests();
    }

    public double kvCacheUsage() {
        return page.kvCacheUsage();
    }

    /** {@code vllm:num_tokens_waiting}: prompt tokens the server has yet to prefill; -1 when the page lacks it. */
    public long tokensWaiting() {
        return page.tokensWaiting();
    }

    /** Whether the page had {@code vllm:num_requests_waiting_by_reason}. */
    public boolean hasWaitingByReason() {
        return page.hasWaitingByReason();
    }

    /** Waiting requests the server holds back for their adapter ({@code reason="deferred"}); 0 without the family. */
    public int waitingDeferred() {
        return page.waitingDeferred();
    }

    public Set<String> activeAdapters() {
        return page.activeAdapters();
    }

    public Set<String> waitingAdapters() {
        return page.waitingAdapters();
    }

    public int maxLora() {
        return page.maxLora();
    }

    public boolean hasResidencyFamilies() {
        return page.hasResidencyFamilies();
    }

    public Map<String, Integer> adapterRunning() {
        return page.adapterRunning();
    }

    public Map<String, Integer> adapterWaiting() {
        return page.adapterWaiting();
    }

    public Map<String, AdapterResidency> residency() {
        return page.residency();
    }

    public int gpuSlots() {
        return page.gpuSlots();
    }

    public int gpuSlotsUsed() {
        return page.gpuSlotsUsed();
    }

    /** The adapters in slots, and whether one is unpinned with no request running or waiting (a cheap eviction). */
    public SlotAdapters slotAdapters() {
        return slotAdapters;
    }

    /** Every adapter's placement here. */
    public Placements placements() {
        return placements;
    }

    /**
     * Every adapter's placement here, computed once when the metrics are read: a pick asks it of every candidate
     * several times (filters and scorers), and a lookup by id is cheaper than working it out from the maps.
     * {@code byId} holds the adapters this server names (resident or waiting), {@code unnamed} every other one.
     *
     * <p>A slot is claimed by an adapter in it with requests running or waiting, by a pinned one, and by each
     * adapter whose requests wait for a slot: those take the next slots that free, so a free or idle slot they
     * will take is not one a new adapter can have (the gateway's lora-affinity counts the same way, active and
     * waiting adapters against max_loras).
     *
     * @param slotQueued requests waiting for an adapter not in a slot: they wait for a slot to free
     * @param turningSlots slots expected to free soon: free ones, and unpinned ones whose adapter has at most
     *                     {@value #TURNING_SLOT_REQUESTS} requests running or waiting
     */
    public record Placements(
            AdapterIds table, LoraPlacement[] byId, LoraPlacement unnamed, int slotQueued, int turningSlots) {
        private static final LoraPlacement[] NONE = new LoraPlacement[0];
        /**
         * A slot whose adapter has more requests than this in flight is not expected to free soon
         * (docs/lab/2026-12-04-placement-variants-not-kept.md, slot turnover).
         */
        public static final int TURNING_SLOT_REQUESTS = 3;

        /** A page without the residency families: no adapter is named, every one counts as having a free slot. */
        static Placements none(AdapterIds table) {
            return new Placements(table, NONE, LoraPlacement.FREE_SLOT, 0, 0);
        }

        static Placements of(PageMetrics page, AdapterIds table) {
            return page.hasResidencyFamilies()
                    ? compute(
                            table,
                            page.residency(),
                            page.adapterRunning(),
                            page.adapterWaiting(),
                            page.gpuSlots(),
                            page.gpuSlotsUsed())
                    : none(table);
        }

        private static Placements compute(
                AdapterIds table,
                Map<String, AdapterResidency> residency,
                Map<String, Integer> running,
                Map<String, Integer> waiting,
                int slots,
                int slotsUsed) {
            int claimed = 0, turning = Math.max(0, slots - slotsUsed);
            for (var entry : residency.entrySet()) {
                if (!entry.getValue().inSlot()) {
                    continue;
                }
                int inFlight = running.getOrDefault(entry.getKey(), 0) + waiting.getOrDefault(entry.getKey(), 0);
                boolean pinned = entry.getValue().pinned();
                if (pinned || inFlight > 0) {
                    claimed++;
                }
                if (!pinned && inFlight <= TURNING_SLOT_REQUESTS) {
                    turning++;
                }
            }
            int queuedAdapters = 0, queuedRequests = 0;
            for (var entry : waiting.entrySet()) {
                AdapterResidency here = residency.get(entry.getKey());
                if (entry.getValue() > 0 && (here == null || !here.inSlot())) {
                    queuedAdapters++;
                    queuedRequests += entry.getValue();
                }
            }
            boolean freeSlot = slots - slotsUsed - queuedAdapters > 0;
            boolean spareSlot = slots - claimed - queuedAdapters > 0;
            boolean queueFits = slots - claimed - queuedAdapters >= 0;
            Set<String> named = new HashSet<>(residency.keySet());
            named.addAll(waiting.keySet());
            int[] ids = new int[named.size()];
            LoraPlacement[] placements = new LoraPlacement[ids.length];
            int bound = 0, i = 0;
            for (String adapter : named) {
                int id = table.of(adapter);
                ids[i] = id;
                placements[i++] = LoraPlacement.fromResidency(
                        residency.get(adapter), waiting.getOrDefault(adapter, 0), freeSlot, spareSlot, queueFits);
                bound = Math.max(bound, id + 1);
            }
            LoraPlacement unnamed = LoraPlacement.fromResidency(null, 0, freeSlot, spareSlot, queueFits);
            LoraPlacement[] byId = new LoraPlacement[bound];
            Arrays.fill(byId, unnamed);
            for (int k = 0; k < ids.length; k++) {
                byId[ids[k]] = placements[k];
            }
            return new Placements(table, byId, unnamed, queuedRequests, turning);
        }

        public LoraPlacement of(String adapter) {
            int id = table.find(adapter);
            return id >= 0 && id < byId.length ? byId[id] : unnamed;
        }

        @Override
        public String toString() {
            return "Placements" + (unnamed == null ? "" : " (others " + unnamed + ")");
        }
    }

    /** These metrics with their ids and placements in {@code table}: a pool's own. */
    public EndpointMetrics inTable(AdapterIds other) {
        return other == table ? this : new EndpointMetrics(page, other);
    }

    /**
     * The adapters in batch slots, and whether one of them can be evicted cheaply (unpinned and idle). {@code ids}
     * are the names' ids in the metrics' {@link AdapterIds} table, in the same order.
     */
    public record SlotAdapters(List<String> names, boolean idleEvictable, int[] ids) {
        static SlotAdapters of(PageMetrics page, AdapterIds table) {
            List<String> inSlots = new ArrayList<>();
            boolean idleEvictable = false;
            for (var entry : page.residency().entrySet()) {
                AdapterResidency r = entry.getValue();
                if (!r.inSlot()) {
                    continue;
                }
                inSlots.add(entry.getKey());
                if (!r.pinned()
                        && page.adapterRunning().getOrDefault(entry.getKey(), 0) == 0
                        && page.adapterWaiting().getOrDefault(entry.getKey(), 0) == 0) {
                    idleEvictable = true;
                }
            }
            int[] ids = new int[inSlots.size()];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = table.of(inSlots.get(i));
            }
            return new SlotAdapters(List.copyOf(inSlots), idleEvictable, ids);
        }

        @Override
        public String toString() {
            return "SlotAdapters" + names + (idleEvictable ? " (one idle)" : "");
        }
    }

    /** Some unpinned adapter in a slot has no request running or waiting: a cheap eviction. */
    public boolean idleEvictableSlot() {
        return slotAdapters.idleEvictable();
    }

    public int adapterRunning(String adapter) {
        return page.adapterRunning().getOrDefault(adapter, 0);
    }

    public int adapterWaiting(String adapter) {
        return page.adapterWaiting().getOrDefault(adapter, 0);
    }

    /** Every adapter name this server mentions, in any family. */
    public Set<String> knownAdapters() {
        Set<String> all = new HashSet<>(page.activeAdapters());
        all.addAll(page.waitingAdapters());
        all.addAll(page.residency().keySet());
        all.addAll(page.adapterRunning().keySet());
        all.addAll(page.adapterWaiting().keySet());
        return all;
    }

    /**
     * These metrics as they will be once a request the router has just sent arrives: one more waiting request, its
     * adapter among the waiting ones, and a slot taken when it can have one at once ({@link PageMetrics#withOwnRequest}).
     *
     * @param adapter the request's adapter, or null for a base-model request
     */
    public EndpointMetrics withRequestSent(String adapter) {
        return new EndpointMetrics(page.withOwnRequest(adapter, false), table);
    }

    /**
     * These metrics with one more running request: a request the router sent that has begun answering (its first
     * byte came back) since this scrape; the same slot accounting as {@link #withRequestSent}.
     */
    public EndpointMetrics withRequestRunning(String adapter) {
        return new EndpointMetrics(page.withOwnRequest(adapter, true), table);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EndpointMetrics other && page.equals(other.page) && table == other.table;
    }

    @Override
    public int hashCode() {
        return page.hashCode() * 31 + System.identityHashCode(table);
    }

    @Override
    public String toString() {
        return "EndpointMetrics" + page;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Mutable builder for tests, the metrics reader and the fleet simulator. */
    public static final class Builder {
        private String modelName;
        private int waitingRequests;
        private int runningRequests;
        private double kvCacheUsage;
        private boolean hasWaitingByReason;
        private int waitingDeferred;
        private long tokensWaiting = -1;
        private final Set<String> activeAdapters = new HashSet<>();
        private final Set<String> waitingAdapters = new HashSet<>();
        private int maxLora;
        private boolean hasResidencyFamilies;
        private final Map<String, Integer> adapterRunning = new HashMap<>();
        private final Map<String, Integer> adapterWaiting = new HashMap<>();
        private final Map<String, AdapterResidency> residency = new HashMap<>();
        private int gpuSlots;
        private int gpuSlotsUsed;
        private AdapterIds table = AdapterIds.UNPOOLED;

        /** The id table of the pool these metrics are for ({@link AdapterIds#UNPOOLED} by default). */
        public Builder ids(AdapterIds ids) {
            table = ids;
            return this;
        }

        public Builder modelName(String name) {
            modelName = name;
            return this;
        }

        public Builder waitingRequests(int n) {
            waitingRequests = n;
            return this;
        }

        public Builder runningRequests(int n) {
            runningRequests = n;
            return this;
        }

        public Builder kvCacheUsage(double usage) {
            kvCacheUsage = usage;
            return this;
        }

        /** {@code vllm:num_tokens_waiting}, present with {@code n} tokens. */
        public Builder tokensWaiting(long n) {
            tokensWaiting = n;
            return this;
        }

        /** Marks {@code vllm:num_requests_waiting_by_reason} present, with {@code n} deferred requests. */
        public Builder waitingDeferred(int n) {
            hasWaitingByReason = true;
            waitingDeferred = n;
            return this;
        }

        public Builder activeAdapters(Set<String> names) {
            activeAdapters.addAll(names);
            return this;
        }

        public Builder waitingAdapters(Set<String> names) {
            waitingAdapters.addAll(names);
            return this;
        }

        public Builder maxLora(int n) {
            maxLora = n;
            return this;
        }

        /** Marks the new families present and sets the slot counts. */
        public Builder slots(int capacity, int used) {
            hasResidencyFamilies = true;
            gpuSlots = capacity;
            gpuSlotsUsed = used;
            return this;
        }

        public Builder hasResidencyFamilies(boolean present) {
            hasResidencyFamilies = present;
            return this;
        }

        public Builder adapterRunning(String adapter, int n) {
            hasResidencyFamilies = true;
            adapterRunning.put(adapter, n);
            return this;
        }

        public Builder adapterWaiting(String adapter, int n) {
            hasResidencyFamilies = true;
            adapterWaiting.put(adapter, n);
            return this;
        }

        public Builder resident(String adapter, AdapterResidency where) {
            hasResidencyFamilies = true;
            residency.put(adapter, where);
            return this;
        }

        public EndpointMetrics build() {
            return new EndpointMetrics(
                    new PageMetrics(
                            modelName,
                            waitingRequests,
                            runningRequests,
                            kvCacheUsage,
                            hasWaitingByReason,
                            waitingDeferred,
                            tokensWaiting,
                            activeAdapters,
                            waitingAdapters,
                            maxLora,
                            hasResidencyFamilies,
                            adapterRunning,
                            adapterWaiting,
                            residency,
                            gpuSlots,
                            gpuSlotsUsed),
                    table);
        }
    }
}
