package dev.patchbay.metrics;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.FinishCounts;
import java.util.List;

/**
 * The numbers of one {@code lora_name} series: an adapter, or the sum of the adapters beyond the series cap.
 *
 * @param level    {@code gpu} or {@code cpu} for a resident adapter; null when not resident and for {@link #OTHER}
 * @param adapters how many adapters the row sums: 1, or the number folded into {@link #OTHER}
 */
record AdapterRow(
        String name,
        int running,
        int waiting,
        String level,
        boolean pinned,
        int rank,
        boolean resident,
        long memoryBytes,
        long promptTokens,
        long generationTokens,
        FinishCounts finished,
        int adapters) {

    /** The {@code lora_name} of the adapters that have no series of their own. */
    static final String OTHER = "__other__";

    static AdapterRow of(AdapterState a) {
        return new AdapterRow(
                a.name(),
                a.running(),
                a.waiting(),
                levelLabel(a.level()),
                a.pinned(),
                a.rank(),
                a.resident(),
                a.resident() ? a.memoryBytes() : 0,
                a.promptTokens(),
                a.generationTokens(),
                a.finished() == null ? FinishCounts.ZERO : a.finished(),
                1);
    }

    /** Constant strings, so rows compare cheaply and no label is built per scrape. */
    private static String levelLabel(AdapterState.Level level) {
        return switch (level) {
            case GPU -> "gpu";
            case CPU -> "cpu";
            case NONE -> null;
        };
    }

    static AdapterRow sumOf(List<AdapterState> adapters) {
        int running = 0, waiting = 0;
        boolean resident = false;
        long memory = 0, prompt = 0, generation = 0;
        long[] finished = new long[FinishReason.values().length];
        for (AdapterState a : adapters) {
            running += a.running();
            waiting += a.waiting();
            resident |= a.resident();
            if (a.resident()) memory += a.memoryBytes();
            prompt += a.promptTokens();
            generation += a.generationTokens();
            if (a.finished() != null) {
                for (FinishReason r : FinishReason.values())
                    finished[r.ordinal()] += a.finished().get(r);
            }
        }
        FinishCounts counts = new FinishCounts(
                finished[FinishReason.STOP.ordinal()],
                finished[FinishReason.LENGTH.ordinal()],
                finished[FinishReason.ABORT.ordinal()],
                finished[FinishReason.ERROR.ordinal()]);
        return new AdapterRow(
                OTHER, running, waiting, null, false, 0, resident, memory, prompt, generation, counts, adapters.size());
    }
}
