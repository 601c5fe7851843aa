package dev.patchbay.router.pick;

import java.util.List;

/**
 * A profile made into a picker: filters, then a weighted sum of scorers, then a picker; and the {@link PreRequest}
 * plugins told of each request that goes out. Shared by the HTTP proxy, the Envoy external processor and the fleet
 * simulator, which all pick through the router's request lifecycle. A pick changes nothing; thread-safe when its
 * parts are.
 */
public final class EndpointPicker {
    private final String name;
    private final List<Filter> filters;
    private final List<WeightedScorer> scorers;
    private final Picker picker;
    private final List<PreRequest> preRequests;

    public EndpointPicker(
            String name,
            List<Filter> filters,
            List<WeightedScorer> scorers,
            Picker picker,
            List<PreRequest> preRequests) {
        this.name = name;
        this.filters = List.copyOf(filters);
        this.scorers = List.copyOf(scorers);
        this.picker = picker;
        this.preRequests = List.copyOf(preRequests);
    }

    public String name() {
        return name;
    }

    public List<WeightedScorer> scorers() {
        return scorers;
    }

    public List<Filter> filters() {
        return filters;
    }

    public Picker picker() {
        return picker;
    }

    public List<PreRequest> preRequests() {
        return preRequests;
    }

    /** Picks among {@code candidates}, which must all be ready (fresh data, reachable). */
    public PickResult pick(PickRequest request, List<EndpointState> candidates) {
        if (candidates.isEmpty()) {
            return PickResult.noEndpoint();
        }
        List<EndpointState> remaining = candidates;
        for (Filter filter : filters) {
            remaining = filter.filter(request, remaining);
            if (remaining.isEmpty()) {
                return PickResult.noEndpoint();
            }
        }
        return PickResult.picked(picker.rank(remaining, totalScores(request, remaining)));
    }

    /** Tells every {@link PreRequest} plugin, in the profile's order, that {@code dispatch} goes out. */
    public void preRequest(Dispatch dispatch) {
        for (PreRequest hook : preRequests) {
            hook.preRequest(dispatch);
        }
    }

    /** Σ weight × score for every candidate, in the candidates' order. */
    public double[] totalScores(PickRequest request, List<EndpointState> candidates) {
        double[] total = new double[candidates.size()];
        for (WeightedScorer weighted : scorers) {
            double[] scores = weighted.scorer().score(request, candidates);
            for (int i = 0; i < total.length; i++) {
                total[i] += weighted.weight() * scores[i];
            }
        }
        return total;
    }
}
