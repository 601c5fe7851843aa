package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.LoraPlacement;
import java.util.ArrayList;
import java.util.List;

/**
 * Drops endpoints whose batch slots are all busy with other adapters, unless every candidate is like that: such an
 * endpoint would make the request wait for a slot however short its queue, and a slot frees only when its adapter
 * has no request left there, which steady traffic may never allow. Backlogged holders do not change that: requests
 * sent to wait where no slot frees can wait until arrivals stop (docs/lab/2026-12-07-spill-over-removed.md). A
 * second home for a backlogged adapter is lora-spread's drain, which frees the slot it goes to.
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
