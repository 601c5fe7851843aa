package dev.patchbay.router.pick;

import java.util.List;

/**
 * The picker's answer.
 *
 * @param outcome whether an endpoint was picked or none was ready
 * @param ranked  the candidates best first (empty unless PICKED)
 */
public record PickResult(Outcome outcome, List<EndpointState> ranked) {
    public enum Outcome {
        PICKED,
        NO_ENDPOINT
    }

    public PickResult {
        ranked = List.copyOf(ranked);
    }

    static PickResult picked(List<EndpointState> ranked) {
        return new PickResult(Outcome.PICKED, ranked);
    }

    static PickResult noEndpoint() {
        return new PickResult(Outcome.NO_ENDPOINT, List.of());
    }

    /** The chosen endpoint; only for PICKED. */
    public EndpointState best() {
        if (ranked.isEmpty()) {
            throw new IllegalStateException("no endpoint was picked: " + outcome);
        }
        return ranked.getFirst();
    }
}
