package dev.patchbay.router.extproc;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pool.Send;
import dev.patchbay.router.proxy.RouterMetrics;
import dev.patchbay.router.route.RequestLifecycle;
import dev.patchbay.router.route.RouteDecision;
import java.util.List;
import java.util.Optional;

/**
 * A request the data plane was told where to send, from that answer to the end of its stream: the stream's end of
 * the request lifecycle, as the HTTP proxy's. The send recorded at the first-ranked endpoint, where the data plane
 * sends it first, stands until the response begins; then it moves to the endpoint the data plane reports served it
 * (after a retry, or one the data plane chose itself), and the pick is recorded once ({@link RouterMetrics#picked}),
 * against that endpoint. With no report, or one naming an endpoint the pool does not know, the first-ranked endpoint
 * keeps it.
 */
final class SentRequest {
    private static final System.Logger LOG = System.getLogger(SentRequest.class.getName());

    private final RequestLifecycle lifecycle;
    private final RouterMetrics metrics;
    private final RouteDecision decision;
    private final List<EndpointState> offered;
    private EndpointState at;
    private Send send;
    private boolean recorded;

    SentRequest(
            RequestLifecycle lifecycle, RouterMetrics metrics, RouteDecision decision, List<EndpointState> offered) {
        this.lifecycle = lifecycle;
        this.metrics = metrics;
        this.decision = decision;
        this.offered = offered;
        this.at = offered.getFirst();
        this.send = decision.send();
    }

    /** The response began (its first message); {@code served} is the endpoint the data plane reports, if it does. */
    void answering(Optional<Endpoint> served) {
        if (!recorded) {
            EndpointState target = served.map(this::stateOf).orElse(at);
            // The first-ranked endpoint never got it, or gave up on it: the send moves where it was served.
            send = send.movedTo(target.endpoint());
            at = target;
            record();
        }
        send.answering();
    }

    /** The stream ended: a request that never saw a response counts where it was sent. */
    void finished() {
        if (!recorded) {
            record();
        }
        send.finished();
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
        return lifecycle.stateOf(served).orElseGet(() -> {
            LOG.log(
                    System.Logger.Level.INFO,
                    "the data plane reports " + served + " served a request, an endpoint "
                            + "the pool does not know; counted at " + at.endpoint());
            return at;
        });
    }
}
