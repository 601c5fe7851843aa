package dev.patchbay.engine;

/**
 * Receives a request's outputs, on the engine thread, in order; must return quickly and never block.
 * Exactly one output with a finish reason ends every accepted request.
 */
public interface RequestListener {
    void onOutput(RequestOutput output);

    /** Whether outputs need text; token ids alone are cheaper (the fleet simulator). */
    default boolean wantsText() {
        return true;
    }
}
