package dev.patchbay.bench.sim;

import dev.patchbay.engine.stats.Counters;
import java.util.Arrays;
import java.util.List;

/** Turns a finished run's ledger and engine counters into a {@link RunResult}. */
final class RunSummary {
    private RunSummary() {}

    /**
     * TTFT counts requests still open at the end with the time they had waited (a lower bound); e2e counts
     * completed requests only; throughput is over the time until the last step ended.
     */
    static RunResult of(
            SimSettings settings,
            String policy,
            double rate,
            RequestLedger ledger,
            List<Replica> replicas,
            int[] sentTo,
            long lastEndNanos,
            double wallSeconds) {
        int n = ledger.size();
        double[] ttft = new double[n], e2e = new double[n];
        int ttftCount = 0, e2eCount = 0, completed = 0, failed = 0, unfinished = 0;
        long tokens = 0;
        long end = Math.max(lastEndNanos, settings.durationNanos());
        for (int i = 0; i < n; i++) {
            tokens += ledger.outputTokens(i);
            switch (ledger.fate(i)) {
                case COMPLETED -> {
                    completed++;
                    e2e[e2eCount++] = (ledger.finishNanos(i) - ledger.arrivalNanos(i)) / 1e9;
                }
                case REFUSED, FAILED -> failed++;
                case IN_FLIGHT, NOT_SENT -> unfinished++;
            }
            if (ledger.firstTokenNanos(i) >= 0) {
                ttft[ttftCount++] = (ledger.firstTokenNanos(i) - ledger.arrivalNanos(i)) / 1e9;
            } else if (ledger.fate(i) == RequestLedger.Fate.IN_FLIGHT
                    || ledger.fate(i) == RequestLedger.Fate.NOT_SENT) {
                ttft[ttftCount++] = Math.max(0, end - ledger.arrivalNanos(i)) / 1e9;
            }
        }
        long fromStorage = 0, intoSlots = 0, evictions = 0, hostEvictions = 0, lookups = 0, hits = 0;
        for (Replica r : replicas) {
            Counters c = r.core.snapshot().counters();
            fromStorage += c.lora().loads().disk();
            intoSlots += c.lora().loads().cpu();
            evictions += c.lora().evictions().gpu();
            hostEvictions += c.lora().evictions().cpu();
            lookups += c.lora().lookups().gpu();
            hits += c.lora().hits().gpu();
        }
        Percentiles t = new Percentiles(ttft, ttftCount);
        Percentiles e = new Percentiles(e2e, e2eCount);
        return new RunResult(
                settings.workload().name(),
                policy,
                rate,
                n,
                completed,
                failed,
                unfinished,
                t.at(50),
                t.at(90),
                t.at(99),
                e.at(99),
                tokens,
                tokens / (end / 1e9),
                fromStorage,
                intoSlots,
                evictions,
                hostEvictions,
                lookups == 0 ? Double.NaN : (double) hits / lookups,
                end / 1e9,
                wallSeconds,
                Arrays.stream(sentTo).boxed().toList());
    }
}
