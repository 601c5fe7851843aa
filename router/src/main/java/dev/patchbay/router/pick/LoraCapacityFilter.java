package dev.patchbay.router.pick;

import java.util.ArrayList;
import java.util.List;

/**
 * Drops endpoints whose batch slots are all busy with other adapters, unless every candidate is
 * like that: such an endpoint would make the request wait for a slot however short its queue.
 */
public final class LoraCapacityFilter implements Filter {
    public static final String NAME = "lora-capacity";

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
        for (EndpointState state : candidates) {
            if (LoraPlacement.of(state.metrics(), request.model()) != LoraPlacement.ALL_SLOTS_BUSY) {
                kept.add(state);
            }
        }
        return kept.isEmpty() ? candidates : kept;
    }
}
