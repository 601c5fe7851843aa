package dev.patchbay.engine;

/** A request the engine refused before accepting it; nothing was queued and the listener is never called. */
public final class RequestRejectedException extends Exception {
    public enum Reason {
        /** The adapter is not loaded, or is being unloaded (HTTP 404). */
        UNKNOWN_ADAPTER,
        /** The request cannot fit the model (HTTP 400). */
        INVALID,
        /** The waiting queue is full (HTTP 503). */
        QUEUE_FULL,
        /** The engine is shutting down (HTTP 503). */
        SHUTTING_DOWN,
        /**
         * Asked to start only with a batch slot for its adapter ({@code EngineCore#submitIfSlot}), and none can be had
         * without waiting for other adapters' requests to finish (HTTP 503).
         */
        NO_SLOT
    }

    private final Reason reason;

    public RequestRejectedException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
