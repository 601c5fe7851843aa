package dev.patchbay.router.proxy;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointPool;

import java.util.concurrent.atomic.AtomicBoolean;

/** One request's prompt tokens in an endpoint's tally, taken back exactly once however the request ends. */
final class PromptInFlight {
    private final EndpointPool pool;
    private final Endpoint endpoint;
    private final long tokens;
    private final AtomicBoolean answered = new AtomicBoolean();

    PromptInFlight(EndpointPool pool, Endpoint endpoint, long tokens) {
        this.pool = pool;
        this.endpoint = endpoint;
        this.tokens = tokens;
        pool.promptSent(endpoint, tokens);
    }

    void answered() {
        if (answered.compareAndSet(false, true)) {
            pool.promptAnswered(endpoint, tokens);
        }
    }
}
