package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.EndpointMetrics;
import dev.patchbay.router.scrape.LoraPlacement;
import java.util.List;

/**
 * 1 - (Q - minQ) / max(maxQ - minQ, minSpread) over the candidates' waiting queues; 1 when all are equal.
 *
 * <p>With {@code slotTurnover}, Q is the queue a LoRA request would wait behind where its adapter is not in a slot
 * and no request for it waits there: those it joins wait for a slot to free, and a server whose slots are mostly held by
 * busy adapters frees them slower, so its requests queued for a slot count as many times more as it has slots for
 * each one that turns over ({@link EndpointMetrics.Placements#turningSlots}), the new request among them. Equal
 * servers keep their plain queues; a server whose four slots hold one hot adapter each serves its slot queue
 * never, and plain queues balanced across servers put requests there for tens of seconds. Off in the built-in
 * profiles: where slots are held by busy adapters but compute is the bound, it starves servers of work
 * ({@code docs/lab/2026-12-04-placement-variants-not-kept.md}).
 *
 * <p>With {@code minSpread} 0 this is the gateway's min-max queue scorer, where one waiting request against none
 * spans the whole range and outweighs most of the other scorers. A larger {@code minSpread} keeps small
 * differences small: a router that counts its own picks (each adds one to a queue until the next scrape) needs that,
 * or it would move an adapter to a new endpoint over a single request.
 */
public final class QueueScorer implements Scorer {
    public static final String NAME = "queue";

    /** A server with no slot expected to free counts as if half a slot did, so its factor stays finite. */
    private static final double NO_TURNING_SLOT = 0.5;

    private final int minSpread;
    private final boolean slotTurnover;

    public QueueScorer(int minSpread, boolean slotTurnover) {
        if (minSpread < 0) {
            throw new IllegalArgumentException("minSpread must be >= 0, got " + minSpread);
        }
        this.minSpread = minSpread;
        this.slotTurnover = slotTurnover;
    }

    public QueueScorer(int minSpread) {
        this(minSpread, false);
    }

    public QueueScorer() {
        this(0);
    }

    public boolean slotTurnover() {
        return slotTurnover;
    }

    public int minSpread() {
        return minSpread;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        long[] waiting = new long[candidates.size()];
        boolean needsSlot = slotTurnover && !request.baseModel();
        for (int i = 0; i < waiting.length; i++) {
            EndpointMetrics m = candidates.get(i).metrics();
            waiting[i] = needsSlot ? queueBehind(m, request.model()) : m.waitingRequests();
        }
        return SpreadScores.lowerIsBetter(waiting, minSpread);
    }

    /** The waiting queue, with requests queued for a slot scaled by how few slots turn over when the adapter needs one. */
    static long queueBehind(EndpointMetrics m, String adapter) {
        if (!m.hasResidencyFamilies() || m.gpuSlots() <= 0) {
            return m.waitingRequests();
        }
        LoraPlacement p = LoraPlacement.of(m, adapter);
        if (p == LoraPlacement.IN_SLOT || p == LoraPlacement.LOADING || p == LoraPlacement.QUEUED) {
            return m.waitingRequests(); // it waits for no slot, or for the one its queued requests will get
        }
        EndpointMetrics.Placements slots = m.placements();
        double factor = m.gpuSlots() / Math.max(slots.turningSlots(), NO_TURNING_SLOT);
        return m.waitingRequests() + Math.round((slots.slotQueued() + 1) * Math.max(0, factor - 1));
    }
}
