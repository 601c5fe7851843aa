package dev.patchbay.metrics;

import dev.patchbay.engine.stats.EngineSnapshot;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The metrics of one engine: feed it every snapshot (histograms accumulate the step events), scrape it from any
 * thread. Gauges and counters of a scrape come from one snapshot, read once from the supplier.
 *
 * <p>The Prometheus text format takes a faster path for the per-adapter families (lines cached per adapter until its
 * numbers change); every other format and family goes through client_java's writers.
 */
public final class EngineMetrics implements Consumer<EngineSnapshot> {

    private final MetricsOptions options;
    private final PrometheusRegistry registry;
    private final SnapshotCollector collector;
    private final StepObserver observer;
    private final TextPageWriter textPage;
    private final ExpositionFormats formats = ExpositionFormats.init();

    /** @param latest the engine's latest snapshot; read once per scrape */
    public EngineMetrics(MetricsOptions options, Supplier<EngineSnapshot> latest) {
        this(options, latest, new PrometheusRegistry());
    }

    /** Registers into {@code registry}, which may hold the server's own collectors too; scrapes include them. */
    public EngineMetrics(MetricsOptions options, Supplier<EngineSnapshot> latest, PrometheusRegistry registry) {
        this.options = Objects.requireNonNull(options, "options");
        Objects.requireNonNull(latest, "latest");
        this.registry = Objects.requireNonNull(registry, "registry");
        this.collector = new SnapshotCollector(options, latest);
        registry.register(collector);
        this.observer = new StepObserver(options, registry);
        this.textPage = new TextPageWriter(
                collector,
                registry,
                latest,
                new AdapterLinesCache(options.servedModelName(), options.engine()),
                new EngineLinesWriter(options.servedModelName(), options.engine()));
    }

    /** Called by the engine on its thread for every snapshot, in order: records the step's events. */
    @Override
    public void accept(EngineSnapshot snapshot) {
        observer.observe(snapshot);
    }

    /**
     * Renders the metrics in the format the Accept header asks for (Prometheus text 0.0.4 when absent or
     * unknown, OpenMetrics, protobuf).
     *
     * @param names        the {@code name[]} query parameters: only these families; empty means all. Exposed
     *                     names such as {@code vllm:prompt_tokens_total} or
     *                     {@code vllm:e2e_request_latency_seconds_bucket} select their family too.
     * @param acceptHeader the request's Accept header, may be null
     */
    public Scrape scrape(Set<String> names, String acceptHeader) {
        ExpositionFormatWriter writer = formats.findWriter(acceptHeader);
        if (writer instanceof PrometheusTextFormatWriter text) {
            PageBuffer page = textPage.render(text, filter(names), EscapingScheme.fromAcceptHeader(acceptHeader));
            return new Scrape(text.getContentType(), page);
        }
        return scrapeWithLibrary(names, acceptHeader);
    }

    /**
     * Like {@link #scrape(Set, String)}, but streams the page into {@code out} (the response body) without building
     * it as one array first.
     *
     * @return the content type of what was written
     */
    public String writeTo(Set<String> names, String acceptHeader, OutputStream out) throws IOException {
        ExpositionFormatWriter writer = formats.findWriter(acceptHeader);
        EscapingScheme escaping = EscapingScheme.fromAcceptHeader(acceptHeader);
        if (writer instanceof PrometheusTextFormatWriter text) {
            textPage.render(text, filter(names), escaping).writeTo(out);
        } else {
            writer.write(out, registry.scrape(filter(names)), escaping);
        }
        return writer.getContentType();
    }

    /** Renders everything in the Prometheus text format. */
    public Scrape scrape() {
        return scrape(Set.of(), null);
    }

    public PrometheusRegistry registry() {
        return registry;
    }

    public MetricsOptions options() {
        return options;
    }

    /** The whole page through client_java's registry and writers: the reference for the faster text path. */
    Scrape scrapeWithLibrary(Set<String> names, String acceptHeader) {
        ExpositionFormatWriter writer = formats.findWriter(acceptHeader);
        MetricSnapshots snapshots = registry.scrape(filter(names));
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
        write(writer, out, snapshots, EscapingScheme.fromAcceptHeader(acceptHeader));
        return new Scrape(writer.getContentType(), out.toByteArray());
    }

    /** Text pages the cached path handed to the library whole; stays 0 unless the library's output changes shape. */
    long textFallbacks() {
        return textPage.fallbacks();
    }

    private static void write(
            ExpositionFormatWriter writer,
            ByteArrayOutputStream out,
            MetricSnapshots snapshots,
            EscapingScheme escaping) {
        try {
            writer.write(out, snapshots, escaping);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Predicate<String> filter(Set<String> names) {
        return NameFilter.of(names);
    }
}
