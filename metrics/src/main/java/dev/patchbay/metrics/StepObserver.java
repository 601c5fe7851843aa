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
        Histograms h = new Histograms(registry, model, engine);
        ttft = h.of("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                Buckets.TIME_TO_FIRST_TOKEN);
        interToken = h.of("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
                Buckets.INTER_TOKEN);
        timePerOutputToken = h.of("vllm:request_time_per_output_token_seconds",
                "Histogram of time_per_output_token_seconds per request.", Buckets.INTER_TOKEN);
        e2e = h.of("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
                Buckets.REQUEST_LATENCY);
        queue = h.of("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
                Buckets.REQUEST_LATENCY);
        inference = h.of("vllm:request_inference_time_seconds",
                "Histogram of time spent in RUNNING phase for request.", Buckets.REQUEST_LATENCY);
        prefill = h.of("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
                Buckets.REQUEST_LATENCY);
        decode = h.of("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
                Buckets.REQUEST_LATENCY);
        iterationTokens = h.of("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
                Buckets.ITERATION_TOKENS);
        double[] tokenBuckets = Buckets.oneTwoFive(options.maxModelLen());
        promptTokens = h.of("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokenBuckets);
        generationTokens = h.of("vllm:request_generation_tokens", "Number of generation tokens processed.",
                tokenBuckets);
        maxGenerationTokens = h.of("vllm:request_max_num_generation_tokens",
                "Histogram of maximum number of requested generation tokens.", tokenBuckets);
        paramsN = h.of("vllm:request_params_n", "Histogram of the n request parameter.", Buckets.REQUEST_PARAMS_N);
        paramsMaxTokens = h.of("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.",
                tokenBuckets);
        if (options.enableLora()) {
            iterationLoraAdapters = h.of("vllm:iteration_lora_adapters",
                    "Histogram of distinct LoRA adapters in each scheduled batch.", Buckets.ITERATION_LORA_ADAPTERS);
            Histogram load = h.builder("vllm:lora_adapter_load_seconds", "Time to bring a LoRA adapter in: from disk "
                    + "into host memory (source=disk) or from host memory into a batch slot (source=cpu).",
                    Buckets.ADAPTER_LOAD).labelNames("model_name", "engine", "source").register(registry);
            loadFromDisk = load.labelValues(model, engine, "disk");
            loadFromCpu = load.labelValues(model, engine, "cpu");
            seriesOverflow = Counter.builder().name("vllm:lora_metric_series_overflow")
                    .help("Times a LoRA adapter was summed into lora_name=\"__other__\" because more adapters were "
                            + "listed than --max-lora-metric-series.")
                    .labelNames("model_name", "engine").register(registry).labelValues(model, engine);
        } else {
            iterationLoraAdapters = loadFromDisk = loadFromCpu = null;
            seriesOverflow = null;
        }
        if (options.enableLora() && options.enableLoraLatencyMetrics()) {
            loraTtft = h.builder("vllm:lora_time_to_first_token_seconds",
                    "Histogram of time to first token in seconds, per LoRA adapter.", Buckets.TIME_TO_FIRST_TOKEN)
                    .labelNames("model_name", "engine", "lora_name").register(registry);
            loraE2e = h.builder("vllm:lora_e2e_request_latency_seconds",
                    "Histogram of e2e request latency in seconds, per LoRA adapter.", Buckets.REQUEST_LATENCY)
                    .labelNames("model_name", "engine", "lora_name").register(registry);
        } else {
            loraTtft = loraE2e = null;
        }
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
        histogram.labelValues(options.servedModelName(), options.engine(), series).observe(value);
    }

    /** Counts adapters newly summed into {@code __other__} and drops latency series of adapters that are gone. */
    private void trackSeries(LoraState lora) {
        List<AdapterState> adapters = lora.adapters();
        if (adapters.size() > options.maxLoraMetricSeries() || !folded.isEmpty()) {
            Set<String> now = new HashSet<>();
            for (AdapterState a : SeriesCap.select(adapters, options.maxLoraMetricSeries()).folded()) {
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
            boolean live = series.equals(AdapterRow.OTHER) ? !folded.isEmpty()
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

    /** Classic-bucket histograms labelled with model_name and engine. */
    private record Histograms(PrometheusRegistry registry, String model, String engine) {
        DistributionDataPoint of(String name, String help, double[] buckets) {
            return builder(name, help, buckets).labelNames("model_name", "engine").register(registry)
                    .labelValues(model, engine);
        }

        Histogram.Builder builder(String name, String help, double[] buckets) {
            return Histogram.builder().name(name).help(help).classicOnly().classicUpperBounds(buckets)
                    .withoutExemplars();
        }
    }
}
