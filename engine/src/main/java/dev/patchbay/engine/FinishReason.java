package dev.patchbay.engine;

/** Why a request ended; the lower-case names are vLLM's {@code finished_reason} label values. */
public enum FinishReason {
    STOP, LENGTH, ABORT, ERROR;

    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
