package dev.patchbay.engine.adapter;

/** An adapter that cannot be served, with a message fit for the API caller. */
public final class AdapterException extends Exception {
    public enum Kind {
        /** Nothing adapter-like at the path (HTTP 404). */
        NOT_FOUND,
        /** An adapter that breaks a rule (HTTP 400). */
        INVALID,
        /** A name clash or a state that forbids the operation (HTTP 400). */
        CONFLICT
    }

    private final Kind kind;

    public AdapterException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public AdapterException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
