package dev.patchbay.router.route;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.RequestInFlight;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A send recorded with the pool before the face sends the request: the send of a request released from the wait for
 * a slot, recorded at once so that the next request released sees that slot taken. The face's first send to that
 * endpoint takes it ({@link RouteDecider#sent}); any other send is recorded on its own.
 */
public final class ReservedSend {
    private final Endpoint endpoint;
    private final RequestInFlight inFlight;
    private final AtomicBoolean taken = new AtomicBoolean();

    ReservedSend(Endpoint endpoint, RequestInFlight inFlight) {
        this.endpoint = endpoint;
        this.inFlight = inFlight;
    }

    /** The recorded send, once, when it is to {@code target}; else null. */
    RequestInFlight take(Endpoint target) {
        return endpoint.equals(target) && taken.compareAndSet(false, true) ? inFlight : null;
    }

    /** Ends the recorded send if no face took it: the request never went out. */
    void dropIfUntaken() {
        if (taken.compareAndSet(false, true)) {
            inFlight.finished();
        }
    }
}
