package dev.patchbay.router.pick;

/**
 * A plugin told of each request the router sends, once its pick and any wait for a slot are over and before it goes
 * out (the gateway's PreRequest extension point): where a plugin records what it needs of the requests it sees sent,
 * so that picking itself changes nothing. Called once per request that goes out, never for a pick that only looks
 * (a refused request, or one that waits on).
 */
public interface PreRequest {
    void preRequest(Dispatch dispatch);
}
