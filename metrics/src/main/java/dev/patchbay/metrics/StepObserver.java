package dev.patchbay.metrics;

import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.FinishedRequest;
import dev.patchbay.engine.stats.LoraState;
import dev.patchbay.engine.stats.StepStats;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Turns the events of each step into histogram observations and keeps the per-adapter histogram series in line
 * with the adapters a snapshot lists. Runs on the engine thread for every snapshot, in order; the work per step is
 * proportional to the step's events, plus the adapter list only while more adapters are listed than the cap.
 */
final class StepObserver {

    private final MetricsOptions options;
    private final DistributionDataPoint ttft, interToken, timePerOutputToken, e2e, queue, inference, prefill, decode;
    private final DistributionDataPoint iterationTokens, promptTokens, generationTokens, maxGenerationTokens;
    private final DistributionDataPoint paramsN, paramsMaxTokens;
    private final DistributionDataPoint iterationLoraAdapters, loadFromDisk, loadFromCpu;
    private final CounterDataPoint seriesOverflow;
    private final Histogram loraTtft, loraE2e;
    /** {@code lora_name} values of the per-adapter latency histograms that have a series. */
    private final Set<String> latencySeries = new HashSet<>();

    private Set<String> folded = Set.of();

    StepObserver(MetricsOptions options, PrometheusRegistry registry) {
        this.options = options;
        String model = options.servedModelName(), engine = options.engine();
        Histograms h = new Histograms(registry, options);
        ttft = h.unlabelled(HistogramFamily.TIME_TO_FIRST_TOKEN);
        interToken = h.unlabelled(HistogramFamily.INTER_TOKEN_LATENCY);
        timePerOutputToken = h.unlabelled(HistogramFamily.TIME_PER_OUTPUT_TOKEN);
        e2e = h.unlabelled(HistogramFamily.E2E_LATENCY);
        queue = h.unlabelled(HistogramFamily.QUEUE_TIME);
        inference = h.unlabelled(HistogramFamily.INFERENCE_TIME);
        prefill = h.unlabelled(HistogramFamily.PREFILL_TIME);
        decode = h.unlabelled(HistogramFamily.DECODE_TIME);
        iterationTokens = h.unlabelled(HistogramFamily.ITERATION_TOKENS);
        promptTokens = h.unlabelled(HistogramFamily.PROMPT_TOKENS);
        generationTokens = h.unlabelled(HistogramFamily.GENERATION_TOKENS);
        maxGenerationTokens = h.unlabelled(HistogramFamily.MAX_GENERATION_TOKENS);
        paramsN = h.unlabelled(HistogramFamily.PARAMS_N);
        paramsMaxTokens = h.unlabelled(HistogramFamily.PARAMS_MAX_TOKENS);
        iterationLoraAdapters = h.unlabelled(HistogramFamily.ITERATION_LORA_ADAPTERS);
        Histogram load = h.register(HistogramFamily.ADAPTER_LOAD);
        loadFromDisk = load == null ? null : load.labelValues(model, engine, "disk");
        loadFromCpu = load == null ? null : load.labelValues(model, engine, "cpu");
        if (options.enableLora()) {
            seriesOverflow = Counter.builder()
                    .name("vllm:lora_metric_series_overflow")
                    .help("Times a LoRA adapter was summed into lora_name=\"__other__\" because more adapters were "
                            + "listed than --max-lora-metric-series.")
                    .labelNames("model_name", "engine")
                    .register(registry)
                    .labelValues(model, engine);
        } else {
            seriesOverflow = null;
        }
        loraTtft = h.register(HistogramFamily.LORA_TIME_TO_FIRST_TOKEN);
        loraE2e = h.register(HistogramFamily.LORA_E2E_LATENCY);
    }

    void observe(EngineSnapshot snapshot) {
        LoraState lora = options.enableLora() ? snapshot.lora() : null;
        if (lora != null) trackSeries(lora);
        StepStats step = snapshot.lastStep();
        if (step == null) return;
        if (step.ranBatch()) {
            iterationTokens.observe(step.scheduledTokens());
            if (iterationLoraAdapters != null && lora != null && step.numAdapters() >= 0) {
                iterationLoraAdapters.observe(step.numAdapters());
            }
        }
        for (StepStats.FirstToken first : step.firstTokens()) {
            observe(ttft, first.ttftSeconds());
            if (loraTtft != null && lora != null && first.adapter() != null) {
                observeAdapter(loraTtft, lora, first.adapter(), first.ttftSeconds());
            }
        }
        for (Double gap : step.interTokenSeconds()) observe(interToken, gap);
        for (FinishedRequest f : step.finished()) {
            observe(e2e, f.e2eSeconds());
            observe(queue, f.queueSeconds());
            observe(prefill, f.prefillSeconds());
            observe(decode, f.decodeSeconds());
            observe(inference, f.inferenceSeconds());
            observe(timePerOutputToken, f.meanTimePerOutputTokenSeconds());
            promptTokens.observe(f.promptTokens());
            generationTokens.observe(f.generationTokens());
            maxGenerationTokens.observe(f.generationTokens());
            paramsN.observe(f.n());
            paramsMaxTokens.observe(f.maxTokensParam());
            if (loraE2e != null && lora != null && f.adapter() != null) {
                observeAdapter(loraE2e, lora, f.adapter(), f.e2eSeconds());
            }
        }
        if (loadFromDisk != null) {
            for (AdapterLoad load : step.loads()) {
                observe(load.source() == AdapterLoad.Source.DISK ? loadFromDisk : loadFromCpu, load.seconds());
            }
        }
    }

    /** Intervals a request never reached are NaN: they are not observations. */
    private static void observe(DistributionDataPoint histogram, double value) {
        if (!Double.isNaN(value)) histogram.observe(value);
    }

    /**
     * An adapter that is no longer listed has no series (it would be stale at once); one beyond the cap observes
     * into {@code __other__}, as its other series do.
     */
    private void observeAdapter(Histogram histogram, LoraState lora, String adapter, double value) {
        if (Double.isNaN(value) || !listed(lora.adapters(), adapter)) return;
        String series = folded.contains(adapter) || adapter.equals(AdapterRow.OTHER) ? AdapterRow.OTHER : adapter;
        latencySeries.add(series);
        histogram
                .labelValues(options.servedModelName(), options.engine(), series)
                .observe(value);
    }

    /** Counts adapters newly summed into {@code __other__} and drops latency series of adapters that are gone. */
    private void trackSeries(LoraState lora) {
        List<AdapterState> adapters = lora.adapters();
        if (adapters.size() > options.maxLoraMetricSeries() || !folded.isEmpty()) {
            Set<String> now = new HashSet<>();
            for (AdapterState a :
                    SeriesCap.select(adapters, options.maxLoraMetricSeries()).folded()) {
                now.add(a.name());
            }
            int entered = 0;
            for (String name : now) if (!folded.contains(name)) entered++;
            if (entered > 0) seriesOverflow.inc(entered);
            folded = now;
        }
        if (latencySeries.isEmpty()) return;
        for (Iterator<String> it = latencySeries.iterator(); it.hasNext(); ) {
            String series = it.next();
            boolean live = series.equals(AdapterRow.OTHER)
                    ? !folded.isEmpty()
                    : listed(adapters, series) && !folded.contains(series);
            if (!live) {
                it.remove();
                loraTtft.remove(options.servedModelName(), options.engine(), series);
                loraE2e.remove(options.servedModelName(), options.engine(), series);
            }
        }
    }

    /** The engine lists adapters by name, so a binary search usually answers; a linear scan confirms a miss. */
    private static boolean listed(List<AdapterState> adapters, String name) {
        int lo = 0, hi = adapters.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int cmp = adapters.get(mid).name().compareTo(name);
            if (cmp == 0) return true;
            if (cmp < 0) lo = mid + 1;
            else hi = mid - 1;
        }
        for (AdapterState a : adapters) if (a.name().equals(name)) return true;
        return false;
    }

    /** Registers the declared histograms that the options enable, labelled with model_name, engine and their own. */
    private record Histograms(PrometheusRegistry registry, MetricsOptions options) {
        /** The histogram, or null when the options leave it out. */
        Histogram register(HistogramFamily family) {
            if (!family.scope.appliesTo(options)) return null;
            List<String> labels = new ArrayList<>(List.of("model_name", "engine"));
            labels.addAll(family.labels);
            return Histogram.builder()
                    .name(family.metricName)
                    .help(family.help)
                    .classicOnly()
                    .classicUpperBounds(family.buckets(options))
                    .withoutExemplars()
                    .labelNames(labels.toArray(String[]::new))
                    .register(registry);
        }

        /** The one series of a histogram without labels of its own, or null when the options leave it out. */
        DistributionDataPoint unlabelled(HistogramFamily family) {
            Histogram histogram = register(family);
            return histogram == null ? null : histogram.labelValues(options.servedModelName(), options.engine());
        }
    }
}
