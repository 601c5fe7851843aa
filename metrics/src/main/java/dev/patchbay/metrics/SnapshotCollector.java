package dev.patchbay.metrics;

import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.LoraState;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusScrapeRequest;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Every gauge and counter of a scrape, built from one engine snapshot: the supplier is read once per collection,
 * so the numbers of a scrape never mix two scheduler steps. What the families are and how each is read is declared
 * in {@link EngineFamily} and {@link AdapterFamily}; this class only turns their samples into client_java's model.
 */
final class SnapshotCollector implements MultiCollector {

    private final MetricsOptions options;
    private final Supplier<EngineSnapshot> latest;
    private final Labels base;
    /** The families shown: every declared one except deprecated ones this version hides. */
    private final List<EngineFamily> engineFamilies = new ArrayList<>();

    private final Set<String> names = new LinkedHashSet<>();

    SnapshotCollector(MetricsOptions options, Supplier<EngineSnapshot> latest) {
        this.options = options;
        this.latest = latest;
        this.base = Labels.of("model_name", options.servedModelName(), "engine", options.engine());
        for (EngineFamily f : EngineFamily.values()) {
            Deprecation deprecation = f.deprecation();
            if (deprecation == null
                    || deprecation.shown(options.patchbayVersion(), options.showHiddenMetricsForVersion())) {
                engineFamilies.add(f);
                names.add(f.metricName);
            }
        }
        for (AdapterFamily f : AdapterFamily.values()) names.add(f.metricName);
    }

    /** The engine-wide families shown: every declared one except deprecated ones this version hides. */
    List<EngineFamily> engineFamilies() {
        return engineFamilies;
    }

    /** Names of every family this collector can produce. */
    Set<String> names() {
        return names;
    }

    @Override
    public MetricSnapshots collect() {
        return collect(name -> true);
    }

    @Override
    public MetricSnapshots collect(PrometheusScrapeRequest request) {
        return collect(name -> true);
    }

    @Override
    public MetricSnapshots collect(Predicate<String> included, PrometheusScrapeRequest request) {
        return collect(included);
    }

    @Override
    public MetricSnapshots collect(Predicate<String> included) {
        if (names.stream().noneMatch(included)) return new MetricSnapshots();
        EngineSnapshot snapshot = latest.get();
        if (snapshot == null) return new MetricSnapshots();
        return new MetricSnapshots(collect(snapshot, rows(snapshot), included, true));
    }

    /** The per-adapter rows of a snapshot after the series cap; empty when LoRA is disabled. */
    List<AdapterRow> rows(EngineSnapshot snapshot) {
        LoraState lora = snapshot.lora();
        if (lora == null) return List.of();
        return SeriesCap.select(lora.adapters(), options.maxLoraMetricSeries()).rows();
    }

    /** The families of one snapshot; the per-adapter ones only when asked, for the cached text writer. */
    List<MetricSnapshot> collect(
            EngineSnapshot s, List<AdapterRow> rows, Predicate<String> included, boolean withAdapterFamilies) {
        List<MetricSnapshot> out = new ArrayList<>();
        for (EngineFamily family : engineFamilies) {
            if (family.scope.appliesTo(s) && included.test(family.metricName)) out.add(engineFamily(family, s, rows));
        }
        if (withAdapterFamilies && s.lora() != null) {
            for (AdapterFamily family : AdapterFamily.values()) {
                if (included.test(family.metricName)) out.add(adapterFamily(family, rows));
            }
        }
        return out;
    }

    private MetricSnapshot engineFamily(EngineFamily family, EngineSnapshot s, List<AdapterRow> rows) {
        Labels familyBase = family.hasBaseLabels() ? base : Labels.EMPTY;
        String[] labelNames = family.labels.toArray(String[]::new);
        Points points = new Points(family.type, family.metricName, family.fullHelp());
        family.read(s, rows, (value, labelValues) -> points.add(familyBase.merge(labelNames, labelValues), value));
        return points.build();
    }

    /** A per-adapter family through the library's model, the reference for the cached text writer. */
    MetricSnapshot adapterFamily(AdapterFamily family, List<AdapterRow> rows) {
        String[] labelNames = family.labels.toArray(String[]::new);
        Points points = new Points(family.type, family.metricName, family.help);
        for (AdapterRow row : rows) {
            Labels rowBase = base.add("lora_name", row.name());
            family.emit(row, (value, labelValues) -> points.add(rowBase.merge(labelNames, labelValues), value));
        }
        return points.build();
    }

    /** The data points of one gauge or counter family, built as its type requires. */
    private static final class Points {
        private final CounterSnapshot.Builder counter;
        private final GaugeSnapshot.Builder gauge;

        Points(MetricType type, String name, String help) {
            counter = type == MetricType.COUNTER
                    ? CounterSnapshot.builder().name(name).help(help)
                    : null;
            gauge = type == MetricType.GAUGE
                    ? GaugeSnapshot.builder().name(name).help(help)
                    : null;
        }

        void add(Labels labels, double value) {
            if (counter != null)
                counter.dataPoint(CounterDataPointSnapshot.builder()
                        .labels(labels)
                        .value(value)
                        .build());
            else
                gauge.dataPoint(GaugeDataPointSnapshot.builder()
                        .labels(labels)
                        .value(value)
                        .build());
        }

        MetricSnapshot build() {
            return counter != null ? counter.build() : gauge.build();
        }
    }
}
