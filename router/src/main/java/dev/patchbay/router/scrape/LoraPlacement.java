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
    /** The adapter is in host memory and a slot can be had (free, or held by an idle adapter). */
    IN_HOST,
    /** A batch slot is free; the adapter must be loaded. */
    FREE_SLOT,
    /** Every slot is taken, but some by idle unpinned adapters: a cheap eviction. */
    IDLE_SLOT,
    /** Every slot is busy with other adapters' requests: the request must wait for one. */
    ALL_SLOTS_BUSY;

    /** Looked up in the placements the metrics computed when they were read ({@link EndpointMetrics#placements}). */
    public static LoraPlacement of(EndpointMetrics m, String adapter) {
        return m.hasResidencyFamilies() ? m.placements().of(adapter) : fromLegacy(m, adapter);
    }

    /**
     * From the residency families: where the adapter is ({@code here}, null when not resident), how many of its
     * requests wait, and whether a slot is free or held by an idle unpinned adapter.
     */
    static LoraPlacement fromResidency(AdapterResidency here, int waiting, boolean freeSlot, boolean idleSlot) {
        if (here != null && here.inSlot()) {
            return IN_SLOT;
        }
        if ((freeSlot || idleSlot) && waiting > 0) {
            return LOADING;
        }
        if (here != null) {
            return freeSlot || idleSlot ? IN_HOST : ALL_SLOTS_BUSY;
        }
        if (freeSlot) {
            return FREE_SLOT;
        }
        return idleSlot ? IDLE_SLOT : ALL_SLOTS_BUSY;
    }

    /**
     * The legacy gauge shows activity only: an active adapter is in a slot; a waiting one is
     * about to be (counted like host memory); idle resident adapters are invisible, so their
     * slots count as free. A server without the family has loaded no adapter yet.
     */
    private static LoraPlacement fromLegacy(EndpointMetrics m, String adapter) {
        if (m.activeAdapters().contains(adapter)) {
            return IN_SLOT;
        }
        if (m.waitingAdapters().contains(adapter)) {
            return IN_HOST;
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
