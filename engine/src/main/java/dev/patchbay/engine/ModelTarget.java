package dev.patchbay.engine;

/**
 * What a request's {@code model} name refers to: the served base model, a registered adapter, or nothing. The
 * engine resolves names in one place ({@link dev.patchbay.engine.sched.EngineCore#resolve}); this type also holds
 * the one message for a name that refers to nothing.
 */
public enum ModelTarget {
    BASE_MODEL,
    ADAPTER,
    UNKNOWN;

    /** vLLM's answer for a model name that is neither the base model nor a loaded adapter. */
    public static String unknownModelMessage(String model) {
        return "The model `" + model + "` does not exist.";
    }
}
