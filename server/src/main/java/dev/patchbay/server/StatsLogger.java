package dev.patchbay.server;

import dev.patchbay.engine.clock.Clock;
import dev.patchbay.engine.stats.Counters;
import dev.patchbay.engine.stats.EngineSnapshot;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The operator's periodic line, in the shape of vLLM's {@code LoggingStatLogger}: prompt and generation throughput over
 * the interval, running and waiting requests, KV cache use, preemptions and prefix cache hits in the interval, and with
 * LoRA the adapters in slots and the loads in the interval. {@link #tick} is called once per interval (10 s in the
 * server); it writes a line only while requests are in flight or when something changed since the last tick, so an
 * idle server stays quiet. {@code --disable-log-stats} turns it off.
 */
final class StatsLogger {
    static final long DEFAULT_INTERVAL_NANOS = 10_000_000_000L;
    private static final System.Logger LOG = System.getLogger(StatsLogger.class.getName());

    private final Supplier<EngineSnapshot> snapshots;
    private final Clock clock;
    private final Consumer<String> sink;
    private Counters lastCounters;
    private long lastTickNanos;
    /** The running, waiting, KV and slot figures of the last line written, to tell a change from a quiet interval. */
    private String lastGauges;

    StatsLogger(Supplier<EngineSnapshot> snapshots, Clock clock, Consumer<String> sink) {
        this.snapshots = snapshots;
        this.clock = clock;
        this.sink = sink;
        this.lastCounters = snapshots.get().counters();
        this.lastTickNanos = clock.nanos();
        this.lastGauges = gauges(snapshots.get());
    }

    /** A logger that writes its lines to the server's log, at INFO. */
    static StatsLogger toLog(Supplier<EngineSnapshot> snapshots, Clock clock) {
        return new StatsLogger(snapshots, clock, StatsLogger::log);
    }

    private static void log(String line) {
        LOG.log(System.Logger.Level.INFO, line);
    }

    /** Writes the line for the interval since the last tick, unless the engine was idle and unchanged. */
    void tick() {
        String line = line();
        if (line != null) sink.accept(line);
    }

    /** The line for the interval since the last tick, or null when there is nothing to report; starts a new interval. */
    String line() {
        EngineSnapshot s = snapshots.get();
        long now = clock.nanos();
        double seconds = (now - lastTickNanos) / 1e9;
        Counters c = s.counters();
        Counters before = lastCounters;
        lastCounters = c;
        lastTickNanos = now;

        String gauges = gauges(s);
        boolean busy = s.numRunning() + s.numWaiting() > 0;
        if (!busy && c.equals(before) && gauges.equals(lastGauges)) return null;
        lastGauges = gauges;

        StringBuilder b = new StringBuilder();
        b.append(String.format(
                Locale.ROOT,
                "Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, ",
                rate(c.promptTokens() - before.promptTokens(), seconds),
                rate(c.generationTokens() - before.generationTokens(), seconds)));
        b.append(String.format(Locale.ROOT, "Running: %d reqs, Waiting: %d reqs, ", s.numRunning(), s.numWaiting()));
        long preemptions = c.preemptions() - before.preemptions();
        if (preemptions > 0) b.append("Preemptions: ").append(preemptions).append(", ");
        b.append(String.format(Locale.ROOT, "GPU KV cache usage: %.1f%%", s.kvCacheUsage() * 100));
        if (s.prefixCaching()) {
            long queries = c.prefixCache().queries() - before.prefixCache().queries();
            long hits = c.prefixCache().hits() - before.prefixCache().hits();
            b.append(String.format(
                    Locale.ROOT, ", Prefix cache hit rate: %.1f%%", queries == 0 ? 0 : 100.0 * hits / queries));
        }
        if (s.lora() != null) {
            long fromDisk = c.lora().loads().disk() - before.lora().loads().disk();
            long intoSlots = c.lora().loads().cpu() - before.lora().loads().cpu();
            b.append(", LoRA adapters in slots: ")
                    .append(s.lora().slotsUsed())
                    .append('/')
                    .append(s.lora().maxLoras());
            b.append(", LoRA loads: ")
                    .append(fromDisk + intoSlots)
                    .append(" (")
                    .append(fromDisk)
                    .append(" from disk, ")
                    .append(intoSlots)
                    .append(" into slots)");
        }
        return b.toString();
    }

    private static String gauges(EngineSnapshot s) {
        return s.numRunning() + " " + s.numWaiting() + " " + s.kvBlocksUsed() + " "
                + (s.lora() == null ? "-" : Objects.toString(s.lora().slotsUsed()));
    }

    private static double rate(long count, double seconds) {
        return seconds <= 0 ? 0 : count / seconds;
    }
}
