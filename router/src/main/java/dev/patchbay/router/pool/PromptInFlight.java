package dev.patchbay.router.pool;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One request's prompt tokens in its endpoint's tally ({@link EndpointPool#promptSent}), taken back exactly once
 * however the request ends. Bound to the tally it was added to, so an endpoint that left the pool and came back
 * meanwhile (a new tally) is not touched.
 */
public final class PromptInFlight {
    private final AtomicLong tally;
    private final long tokens;
    private final AtomicBoolean answered = new AtomicBoolean();

    /** Adds {@code tokens} to {@code tally}; the pool makes these, and so does the fleet simulator for its own tally. */
    public PromptInFlight(AtomicLong tally, long tokens) {
        this.tally = tally;
        this.tokens = tokens;
        tally.addAndGet(tokens);
    }

    /** At the answer's first byte, or when the request failed; later calls do nothing. */
    public void answered() {
        if (answered.compareAndSet(false, true)) {
            tally.addAndGet(-tokens);
        }
    }
}
