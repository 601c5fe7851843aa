package dev.patchbay.metrics;

import dev.patchbay.engine.stats.EngineSnapshot;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The Prometheus text page with the collector's families written from caches: the per-adapter ones by
 * {@link AdapterLinesCache}, the engine-wide ones by {@link EngineLinesWriter}. client_java renders every other
 * family (histograms, foreign collectors) in one pass, and the cached bytes are spliced in where the library would
 * have put them; a router's {@code name[]} page asks for none of the others and skips the library.
 */
final class TextPageWriter {

    private final SnapshotCollector collector;
    private final PrometheusRegistry registry;
    private final Supplier<EngineSnapshot> latest;
    private final AdapterLinesCache adapterLines;
    private final EngineLinesWriter engineLines;
    private final LongAdder fallbacks = new LongAdder();
    /** Snapshots without data points that let the library order the cached families; the library writes nothing for them. */
    private final Map<MetricSnapshot, Object> standIns = new IdentityHashMap<>();

    private final Map<Object, MetricSnapshot> standInOf = new HashMap<>();

    TextPageWriter(
            SnapshotCollector collector,
            PrometheusRegistry registry,
            Supplier<EngineSnapshot> latest,
            AdapterLinesCache adapterLines,
            EngineLinesWriter engineLines) {
        this.collector = collector;
        this.registry = registry;
        this.latest = latest;
        this.adapterLines = adapterLines;
        this.engineLines = engineLines;
        for (EngineFamily family : EngineFamily.values()) addStandIn(family, family.metricName, family.type);
        for (AdapterFamily family : AdapterFamily.values()) addStandIn(family, family.metricName, family.type);
    }

    private void addStandIn(Object family, String name, MetricType type) {
        MetricSnapshot standIn = type == MetricType.COUNTER
                ? CounterSnapshot.builder().name(name).build()
                : GaugeSnapshot.builder().name(name).build();
        standIns.put(standIn, family);
        standInOf.put(family, standIn);
    }

    PageBuffer render(PrometheusTextFormatWriter writer, Predicate<String> filter, EscapingScheme escaping) {
        Set<String> own = collector.names();
        EngineSnapshot snapshot = own.stream().anyMatch(filter) ? latest.get() : null;
        List<AdapterRow> rows = snapshot == null ? List.of() : collector.rows(snapshot);
        List<MetricSnapshot> families = new ArrayList<>();
        for (MetricSnapshot other : registry.scrape(name -> filter.test(name) && !own.contains(name))) {
            families.add(other);
        }
        int others = families.size();
        if (snapshot != null) {
            for (EngineFamily family : collector.engineFamilies()) {
                if (family.scope.appliesTo(snapshot) && filter.test(family.metricName)) {
                    families.add(standInOf.get(family));
                }
            }
            if (snapshot.lora() != null) {
                for (AdapterFamily family : AdapterFamily.values()) {
                    if (filter.test(family.metricName)) families.add(standInOf.get(family));
                }
            }
        }
        MetricSnapshots sorted = new MetricSnapshots(families);
        byte[] library = others == 0 ? new byte[0] : write(writer, sorted, escaping);
        List<int[]> segments = familySegments(library);
        int expected = 0;
        for (MetricSnapshot family : sorted) {
            if (!standIns.containsKey(family) && !family.getDataPoints().isEmpty()) expected++;
        }
        PageBuffer page = new PageBuffer();
        if (segments.size() != expected) {
            // the library wrote something this splitter does not understand: serve its page unchanged
            fallbacks.increment();
            page.add(write(writer, registry.scrape(filter), escaping));
            return page;
        }
        boolean anyAdapterFamily = false;
        for (MetricSnapshot family : sorted) anyAdapterFamily |= standIns.get(family) instanceof AdapterFamily;
        List<AdapterLinesCache.Chunk> chunks = anyAdapterFamily ? adapterLines.chunksOf(rows) : List.of();
        int next = 0;
        for (MetricSnapshot family : sorted) {
            Object cached = standIns.get(family);
            if (cached instanceof AdapterFamily adapterFamily) {
                adapterLines.write(page, adapterFamily, chunks);
            } else if (cached instanceof EngineFamily engineFamily) {
                engineLines.write(page, engineFamily, snapshot, rows);
            } else if (!family.getDataPoints().isEmpty()) {
                int[] segment = segments.get(next++);
                page.add(library, segment[0], segment[1] - segment[0]);
            }
        }
        return page;
    }

    /** Pages served by the library alone because its output could not be split into families. */
    long fallbacks() {
        return fallbacks.sum();
    }

    /**
     * Byte ranges of the families in a text page: a family starts with its comment lines ({@code # HELP},
     * {@code # TYPE}) after the sample lines of the previous one. Label values and help texts never hold a raw
     * newline (the writer escapes it), so every line start is a real one.
     */
    static List<int[]> familySegments(byte[] page) {
        List<int[]> segments = new ArrayList<>();
        int start = -1;
        boolean previousWasSample = true;
        for (int at = 0; at < page.length; ) {
            boolean comment = page[at] == '#';
            if (comment && previousWasSample) {
                if (start >= 0) segments.add(new int[] {start, at});
                start = at;
            }
            previousWasSample = !comment;
            while (at < page.length && page[at] != '\n') at++;
            at++;
        }
        if (start >= 0) segments.add(new int[] {start, page.length});
        return segments;
    }

    private static byte[] write(PrometheusTextFormatWriter writer, MetricSnapshots snapshots, EscapingScheme escaping) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
        try {
            writer.write(out, snapshots, escaping);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
