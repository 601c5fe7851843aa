package dev.patchbay.router.extproc;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pool.RequestInFlight;
import dev.patchbay.router.proxy.RouterMetrics;
import dev.patchbay.router.route.RouteDecider;
import dev.patchbay.router.route.RouteDecision;

import java.util.List;
import java.util.Optional;

/**
 * A request the data plane was told where to send, from that answer to the end of its stream: the stream's pick
 * bookkeeping, through the same two calls the HTTP proxy makes ({@link RouteDecider#sent} and
 * {@link RouterMetrics#picked}). The request counts at the first-ranked endpoint, where the data plane sends it
 * first, until the response begins; then it moves to the endpoint the data plane reports served it (a fallback,
 * after a retry, or one the data plane chose itself), and the pick is recorded once, against that endpoint. With no
 * report, or one naming an endpoint the pool does not know, the first-ranked endpoint keeps it.
 */
final class SentRequest {
    private static final System.Logger LOG = System.getLogger(SentRequest.class.getName());

    private final RouteDecider decider;
    private final RouterMetrics metrics;
    private final RouteDecision decision;
    private final List<EndpointState> offered;
    private EndpointState at;
    private RequestInFlight inFlight;
    private boolean recorded;

    SentRequest(RouteDecider decider, RouterMetrics metrics, RouteDecision decision, List<EndpointState> offered) {
        this.decider = decider;
        this.metrics = metrics;
        this.decision = decision;
        this.offered = offered;
        this.at = offered.getFirst();
        this.inFlight = decider.sent(decision, at);
    }

    /** The response began (its first message); {@code served} is the endpoint the data plane reports, if it does. */
    void answering(Optional<Endpoint> served) {
        if (!recorded) {
            EndpointState target = served.map(this::stateOf).orElse(at);
            if (!target.endpoint().equals(at.endpoint())) {
                inFlight.finished(); // the first-ranked endpoint never got it, or gave up on it
                at = target;
                inFlight = decider.sent(decision, target);
            }
            record();
        }
        inFlight.answering();
    }

    /** The stream ended: a request that never saw a response counts where it was sent. */
    void finished() {
        if (!recorded) {
            record();
        }
        inFlight.finished();
    }

    private void record() {
        recorded = true;
        metrics.picked(at, decision);
    }

    private EndpointState stateOf(Endpoint served) {
        for (EndpointState state : offered) {
            if (state.endpoint().equals(served)) {
                return state;
            }
        }
        return decider.stateOf(served).orElseGet(() -> {
            LOG.log(System.Logger.Level.INFO, "the data plane reports " + served + " served a request, an endpoint "
                    + "the pool does not know; counted at " + at.endpoint());
            return at;
        });
    }
}
