package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.EndpointMetrics;

/**
 * An endpoint and what the router knows of it: what filters and scorers see.
 *
 * @param metrics              what the last scrape read (plus the router's own picks since, when it counts them)
 * @param promptTokensInFlight prefill work the endpoint still has to do, in prompt tokens: the router's own tally
 *                             of prompts it sent there that have had no first byte of answer yet (a prompt being
 *                             prefilled is already "running" on vLLM's page), plus, from a server that writes
 *                             {@code vllm:num_tokens_waiting}, the other routers' prompts that count showed
 */
public record EndpointState(Endpoint endpoint, EndpointMetrics metrics, long promptTokensInFlight) {
    public EndpointState {
        if (promptTokensInFlight < 0) {
            throw new IllegalArgumentException("promptTokensInFlight must be >= 0, got " + promptTokensInFlight);
        }
    }

    /** A state with nothing in flight (tests, and callers that keep no tally). */
    public EndpointState(Endpoint endpoint, EndpointMetrics metrics) {
        this(endpoint, metrics, 0);
    }

    public EndpointState withPromptTokensInFlight(long tokens) {
        return tokens == promptTokensInFlight ? this : new EndpointState(endpoint, metrics, tokens);
    }
}
