package dev.patchbay.router.pick;

import java.util.List;

/**
 * Filters, then a weighted sum of scorers, then a picker: the endpoint picker shared by the HTTP
 * proxy, an Envoy external processor, and the fleet simulator (which calls it directly on
 * endpoint states it builds itself). Thread-safe when its parts are.
 */
public final class EndpointPicker {
    private final String name;
    private final List<Filter> filters;
    private final List<WeightedScorer> scorers;
    private final Picker picker;
    private final SaturationDetector saturation;
    private final boolean countsOwnPicks;
    private final long slotWaitNanos;

    /**
     * @param countsOwnPicks true when the caller should add each pick to the endpoint's state until the next scrape
     *                       ({@link dev.patchbay.router.scrape.EndpointMetrics#withRequestSent}), so the picks
     *                       between two scrapes do not all land on the endpoint that looked best at the first
     */
    public EndpointPicker(String name, List<Filter> filters, List<WeightedScorer> scorers, Picker picker,
                          SaturationDetector saturation, boolean countsOwnPicks) {
        this(name, filters, scorers, picker, saturation, countsOwnPicks, 0);
    }

    /**
     * @param slotWaitNanos how long an adapter request may wait in the router while no endpoint has a slot for its
     *                      adapter ({@link SlotWaitQueue}); 0: it never waits
     */
    public EndpointPicker(String name, List<Filter> filters, List<WeightedScorer> scorers, Picker picker,
                          SaturationDetector saturation, boolean countsOwnPicks, long slotWaitNanos) {
        if (slotWaitNanos < 0) {
            throw new IllegalArgumentException("the wait for a slot must be >= 0, got " + slotWaitNanos + " ns");
        }
        this.slotWaitNanos = slotWaitNanos;
        this.name = name;
        this.countsOwnPicks = countsOwnPicks;
        this.filters = List.copyOf(filters);
        this.scorers = List.copyOf(scorers);
        this.picker = picker;
        this.saturation = saturation;
    }

    public String name() {
        return name;
    }

    public boolean countsOwnPicks() {
        return countsOwnPicks;
    }

    /** How long an adapter request may wait in the router for a slot; 0 when it never waits. */
    public long slotWaitNanos() {
        return slotWaitNanos;
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

    public SaturationDetector saturation() {
        return saturation;
    }

    /** Picks among {@code candidates}, which must all be ready (fresh data, reachable). */
    public PickResult pick(PickRequest request, List<EndpointState> candidates) {
        if (candidates.isEmpty()) {
            return PickResult.noEndpoint();
        }
        if (request.sheddable() && saturation.isSaturated(candidates)) {
            return PickResult.shed();
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
