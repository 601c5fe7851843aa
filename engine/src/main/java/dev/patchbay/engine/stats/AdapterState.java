package dev.patchbay.engine.stats;

import java.util.Locale;

/**
 * One adapter as a snapshot sees it: listed while it is resident in a tier or has requests in flight.
 *
 * @param level           fastest tier holding it: {@code GPU} (a batch slot), {@code CPU} (host memory), or {@code NONE}
 * @param loading         a load from storage is in progress
 * @param memoryBytes     bytes of its weights where it is resident (0 when not resident)
 * @param promptTokens    cumulative prompt tokens of its requests
 * @param generationTokens cumulative generated tokens of its requests
 * @param finished        cumulative finished requests, indexed by {@link dev.patchbay.engine.FinishReason#ordinal()}
 */
public record AdapterState(
        String name,
        int id,
        int running,
        int waiting,
        Level level,
        boolean loading,
        boolean pinned,
        int rank,
        long memoryBytes,
        long promptTokens,
        long generationTokens,
        FinishCounts finished) {

    public enum Level {
        GPU,
        CPU,
        NONE;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** This state with {@code waiting} requests waiting. */
    public AdapterState withWaiting(int waiting) {
        return new AdapterState(
                name,
                id,
                running,
                waiting,
                level,
                loading,
                pinned,
                rank,
                memoryBytes,
                promptTokens,
                generationTokens,
                finished);
    }

    public boolean resident() {
        return level != Level.NONE;
    }
}
