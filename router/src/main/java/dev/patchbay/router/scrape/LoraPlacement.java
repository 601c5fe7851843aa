package dev.patchbay.router.scrape;

/**
 * How cheaply an endpoint can start serving an adapter, best first. Computed from Patchbay's
 * residency families when present, else approximated from the legacy activity gauge.
 */
public enum LoraPlacement {
    /** The adapter is in a batch slot. */
    IN_SLOT,
    /**
     * Requests for the adapter wait there and a slot can be had: it is being loaded (from storage or host memory),
     * and a request sent now shares that load. Until the load lands nothing else on the page shows that the adapter
     * is taking that server's slot, and another endpoint looking as good would get a second copy whose load evicts
     * some other adapter's only one: in a pool with no slot to spare that starts a chain of evictions that need not
     * end.
     */
    LOADING,
    /**
     * Requests for the adapter wait there for a slot to free, with every slot busy or claimed by adapters queued
     * before it. A request sent now waits with them for the same load and takes no second slot; sent elsewhere it
     * would most likely queue for a slot there too and make the fleet load the adapter twice, and where slots are
     * the bottleneck every extra load lengthens every adapter's wait for one.
     */
    QUEUED,
    /** The adapter is in host memory and a slot can be had (free, or held by an idle adapter no one queues for). */
    IN_HOST,
    /** A batch slot is free, also once the adapters queued for a slot have theirs; the adapter must be loaded. */
    FREE_SLOT,
    /** Every slot is taken, but more are held by idle unpinned adapters than other adapters queue for: a cheap eviction. */
    IDLE_SLOT,
    /**
     * Every slot is busy with other adapters' requests, or claimed by adapters queued for one: the request must wait
     * for a slot to free.
     */
    ALL_SLOTS_BUSY;

    /** Looked up in the placements the metrics computed when they were read ({@link EndpointMetrics#placements}). */
    public static LoraPlacement of(EndpointMetrics m, String adapter) {
        return m.hasResidencyFamilies() ? m.placements().of(adapter) : fromLegacy(m, adapter);
    }

    /**
     * From the residency families: where the adapter is ({@code here}, null when not resident), how many of its
     * requests wait, whether a slot is free once the adapters queued for one have theirs, whether a slot can be had
     * at all (free, or held by an idle unpinned adapter no queued adapter takes first), and whether every adapter
     * queued for a slot, this one among them, can have one.
     */
    static LoraPlacement fromResidency(
            AdapterResidency here, int waiting, boolean freeSlot, boolean spareSlot, boolean queueFits) {
        if (here != null && here.inSlot()) {
            return IN_SLOT;
        }
        if (waiting > 0) {
            return queueFits ? LOADING : QUEUED;
        }
        if (here != null) {
            return spareSlot ? IN_HOST : ALL_SLOTS_BUSY;
        }
        if (freeSlot) {
            return FREE_SLOT;
        }
        return spareSlot ? IDLE_SLOT : ALL_SLOTS_BUSY;
    }

    /**
     * The legacy gauge shows activity only: an active adapter is in a slot; a waiting one is
     * about to be (counted like host memory); idle resident adapters are invisible, so their
     * slots count as free. A server without the family has loaded no adapter yet.
     *
     * <p>The scheduler's own word comes first: requests deferred there ({@code reason="deferred"}
     * of {@code vllm:num_requests_waiting_by_reason}) were held back because the step's adapters
     * already filled {@code max_loras}, so an adapter not running or waiting there would wait for a
     * slot too, however many free ones the legacy gauge's names, written in whole seconds, suggest.
     */
    private static LoraPlacement fromLegacy(EndpointMetrics m, String adapter) {
        if (m.activeAdapters().contains(adapter)) {
            return IN_SLOT;
        }
        if (m.waitingAdapters().contains(adapter)) {
            return IN_HOST;
        }
        if (m.waitingDeferred() > 0) {
            return ALL_SLOTS_BUSY;
        }
        if (m.maxLora() <= 0) {
            return FREE_SLOT;
        }
        int busy = m.activeAdapters().size();
        for (String waiting : m.waitingAdapters()) {
            if (!m.activeAdapters().contains(waiting)) {
                busy++;
            }
        }
        return busy < m.maxLora() ? FREE_SLOT : ALL_SLOTS_BUSY;
    }
}
