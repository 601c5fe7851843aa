package dev.patchbay.engine;

import java.util.Locale;

/** Why a request ended; the lower-case names are vLLM's {@code finished_reason} label values. */
public enum FinishReason {
    STOP,
    LENGTH,
    ABORT,
    ERROR;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
