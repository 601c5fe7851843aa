package dev.patchbay.router.route;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pool.Send;
import java.util.List;
import java.util.function.Predicate;

/**
 * What to do with one request: refuse it with {@code error}, or send {@code body} to the first of {@code ranked} (the
 * others are what a face may retry on, in order), where {@code send} is recorded.
 *
 * @param error     the answer to give instead of forwarding, or null
 * @param request   what the picker was asked (null when refused before picking)
 * @param body      the body to forward: the original, or re-serialised after a model rewrite
 * @param rewritten true when {@code body} differs from the original
 * @param ranked    endpoints best first; empty when refused
 * @param promptTokens the prompt's estimated size ({@link PromptSize}); 0 without a body
 * @param staleData true when no endpoint had fresh data and the pick was made on older data
 *                  ({@link dev.patchbay.router.pool.EndpointPool#candidates})
 * @param send      the send to the first of {@code ranked}, recorded when the decision was made; null when refused.
 *                  The face ends it, or moves it where it sends instead ({@link Send#movedTo})
 * @param slotRetry non-null when the request waited, or could have waited, for a batch slot and has time left to
 *                  wait: a face that can send again asks the server to start it only with a slot ({@link
 *                  RequestLifecycle#REQUIRE_SLOT_HEADER}) and, refused, hands it back ({@link
 *                  RequestLifecycle#slotRefused})
 */
public record RouteDecision(
        OpenAiError error,
        PickRequest request,
        byte[] body,
        boolean rewritten,
        List<EndpointState> ranked,
        long promptTokens,
        boolean staleData,
        Send send,
        SlotRetry slotRetry) {
    public RouteDecision {
        ranked = List.copyOf(ranked);
    }

    static RouteDecision refuse(OpenAiError error, PickRequest request) {
        return new RouteDecision(error, request, null, false, List.of(), 0, false, null, null);
    }

    /** What sending a request again after a server refused it for want of a slot needs; opaque to the faces. */
    public record SlotRetry(RequestLifecycle.Admitted admitted, Predicate<Endpoint> eligible, long deadlineNanos) {}

    /** The server should start the request only with a batch slot for its adapter ({@link #slotRetry}). */
    public boolean requiresSlot() {
        return slotRetry != null;
    }

    public boolean refused() {
        return error != null;
    }
}
