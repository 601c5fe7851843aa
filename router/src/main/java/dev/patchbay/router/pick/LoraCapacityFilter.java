package dev.patchbay.router.pick;

import java.util.ArrayList;
import java.util.List;

/**
 * Drops endpoints whose batch slots are all busy with other adapters: such an endpoint would make the request
 * wait for a slot however short its queue. It yields (keeps everyone, leaving the choice to the scorers) when
 * every candidate is like that, or when the endpoints it would keep are already much more queued than those it
 * would drop: past that point, piling onto the replicas that hold the adapter costs more than waiting for a
 * slot elsewhere (the fleet simulator showed TTFT p99 collapsing past the knee without this).
 */
public final class LoraCapacityFilter implements Filter {
    public static final String NAME = "lora-capacity";
    /** Waiting requests by which the kept endpoints may exceed the dropped ones before the filter yields. */
    public static final int DEFAULT_QUEUE_SLACK = 5;

    private final int queueSlack;

    public LoraCapacityFilter() {
        this(DEFAULT_QUEUE_SLACK);
    }

    public LoraCapacityFilter(int queueSlack) {
        if (queueSlack < 0) throw new IllegalArgumentException("queue slack must be >= 0, got " + queueSlack);
        this.queueSlack = queueSlack;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<EndpointState> filter(PickRequest request, List<EndpointState> candidates) {
        if (request.baseModel()) {
            return candidates;
        }
        List<EndpointState> kept = new ArrayList<>(candidates.size());
        int keptMinQueue = Integer.MAX_VALUE;
        int droppedMinQueue = Integer.MAX_VALUE;
        for (EndpointState state : candidates) {
            int queue = state.metrics().waitingRequests();
            if (LoraPlacement.of(state.metrics(), request.model()) != LoraPlacement.ALL_SLOTS_BUSY) {
                kept.add(state);
                keptMinQueue = Math.min(keptMinQueue, queue);
            } else {
                droppedMinQueue = Math.min(droppedMinQueue, queue);
            }
        }
        if (kept.isEmpty()) return candidates;
        boolean keptOverloaded = droppedMinQueue != Integer.MAX_VALUE && keptMinQueue > droppedMinQueue + queueSlack;
        return keptOverloaded ? candidates : kept;
    }
}
