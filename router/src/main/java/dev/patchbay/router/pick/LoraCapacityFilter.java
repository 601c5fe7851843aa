package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.LoraPlacement;
import java.util.ArrayList;
import java.util.List;

/**
 * Drops endpoints whose batch slots are all busy with other adapters, unless every candidate is
 * like that: such an endpoint would make the request wait for a slot however short its queue.
 * Spill-over: when the only endpoints left are the adapter's holders and each has more than
 * {@value #SPILL_WAITING} requests waiting, nothing is dropped, so the queue scorer may send the
 * request to wait for a slot on a shorter queue (where it opens another home for the adapter).
 */
public final class LoraCapacityFilter implements Filter {
    public static final String NAME = "lora-capacity";
    /**
     * Holders' waiting queues past which the spill-over opens: low enough that a frozen placement spills before its
     * queue is hopeless, high enough that a burst does not make copies (docs/lab/2026-12-03-placement-design.md).
     */
    public static final int SPILL_WAITING = 16;

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
        boolean holdersBacklogged = true;
        int holders = 0;
        for (EndpointState state : candidates) {
            LoraPlacement p = LoraPlacement.of(state.metrics(), request.model());
            if (p != LoraPlacement.ALL_SLOTS_BUSY) {
                kept.add(state);
            }
            if (p == LoraPlacement.IN_SLOT || p == LoraPlacement.LOADING || p == LoraPlacement.QUEUED) {
                holders++;
                holdersBacklogged &= state.metrics().waitingRequests() > SPILL_WAITING;
            }
        }
        if (holders > 0 && holdersBacklogged && kept.size() == holders) return candidates;
        return kept.isEmpty() ? candidates : kept;
    }
}
