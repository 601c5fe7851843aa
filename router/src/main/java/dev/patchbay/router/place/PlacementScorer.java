package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.Scorer;
import java.util.List;
import java.util.function.Supplier;

/**
 * Routing reads the placement: 1 for an adapter's planned homes, 0 elsewhere; every candidate alike (0) for an adapter
 * without a plan (placement leaves it to on-demand loading) and for base-model requests. Weighted above the residency
 * scorer's spread, it keeps a placed adapter's requests on its homes, so each server gets the traffic placement
 * balanced it for.
 */
public final class PlacementScorer implements Scorer {
    public static final String NAME = "placement";

    private final Supplier<Placement> placement;

    public PlacementScorer(Supplier<Placement> placement) {
        this.placement = placement;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        double[] scores = new double[candidates.size()];
        if (request.baseModel()) return scores;
        List<Endpoint> homes = placement.get().homes().get(request.model());
        if (homes == null) return scores;
        for (int i = 0; i < scores.length; i++) {
            scores[i] = homes.contains(candidates.get(i).endpoint()) ? 1 : 0;
        }
        return scores;
    }
}
