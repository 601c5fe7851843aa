package dev.patchbay.router.route;

import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;

import java.util.List;

/**
 * What to do with one request: refuse it with {@code error}, or send {@code body} to the first
 * of {@code ranked} (the others are fallbacks, in order).
 *
 * @param error     the answer to give instead of forwarding, or null
 * @param request   what the picker was asked (null when refused before picking)
 * @param body      the body to forward: the original, or re-serialised after a model rewrite
 * @param rewritten true when {@code body} differs from the original
 * @param ranked    endpoints best first; empty when refused
 * @param promptTokens the prompt's estimated size ({@link PromptSize}); 0 without a body
 * @param staleData true when no endpoint had fresh data and the pick was made on older data
 *                  ({@link dev.patchbay.router.pool.EndpointPool#candidates})
 * @param reserved  for a request that waited in the router for a slot, its send to the first of {@code ranked},
 *                  recorded when it was released ({@link RouteDecider#sent} hands it out); else null
 */
public record RouteDecision(OpenAiError error, PickRequest request, byte[] body, boolean rewritten,
                            List<EndpointState> ranked, long promptTokens, boolean staleData, ReservedSend reserved) {
    public RouteDecision {
        ranked = List.copyOf(ranked);
    }

    RouteDecision(OpenAiError error, PickRequest request, byte[] body, boolean rewritten, List<EndpointState> ranked,
                  long promptTokens, boolean staleData) {
        this(error, request, body, rewritten, ranked, promptTokens, staleData, null);
    }

    static RouteDecision refuse(OpenAiError error, PickRequest request) {
        return new RouteDecision(error, request, null, false, List.of(), 0, false);
    }

    RouteDecision withReserved(ReservedSend send) {
        return new RouteDecision(error, request, body, rewritten, ranked, promptTokens, staleData, send);
    }

    public boolean refused() {
        return error != null;
    }
}
