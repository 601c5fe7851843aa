package dev.patchbay.metrics;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.stats.Counters;
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
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Every gauge and counter of a scrape, built from one engine snapshot: the supplier is read once per collection,
 * so the numbers of a scrape never mix two scheduler steps.
 */
final class SnapshotCollector implements MultiCollector {

    static final String LEGACY_LORA_INFO = "vllm:lora_requests_info";
    /** Families on their way out, with the version that deprecated each. */
    static final Map<String, Deprecation> DEPRECATED = Map.of(LEGACY_LORA_INFO,
            new Deprecation("0.1", "vllm:num_lora_requests_running and vllm:lora_adapter_loaded"));
    static final String SERIES_OVERFLOW_ADAPTERS = "vllm:lora_metric_series_overflow_adapters";

    private static final List<String> ENGINE_FAMILIES = List.of("vllm:num_requests_running",
            "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:cache_config_info", "vllm:num_preemptions",
            "vllm:prompt_tokens", "vllm:generation_tokens", "vllm:request_success", "vllm:prefix_cache_queries",
            "vllm:prefix_cache_hits");
    private static final List<String> LORA_FAMILIES = List.of("vllm:lora_config_info", "vllm:max_gpu_lora_adapters",
            "vllm:num_gpu_loaded_lora_adapters", "vllm:num_cpu_loaded_lora_adapters", "vllm:lora_adapter_loads",
            "vllm:lora_adapter_evictions", "vllm:lora_cache_lookups", "vllm:lora_cache_hits",
            SERIES_OVERFLOW_ADAPTERS, LEGACY_LORA_INFO);

    private final MetricsOptions options;
    private final Supplier<EngineSnapshot> latest;
    /** Deprecated families this version no longer shows. */
    private final Set<String> hidden = new HashSet<>();
    private final Labels base;
    private final Set<String> names = new LinkedHashSet<>();

    SnapshotCollector(MetricsOptions options, Supplier<EngineSnapshot> latest) {
        this.options = options;
        this.latest = latest;
        DEPRECATED.forEach((name, deprecation) -> {
            if (!deprecation.shown(options.patchbayVersion(), options.showHiddenMetricsForVersion())) hidden.add(name);
        });
        this.base = Labels.of("model_name", options.servedModelName(), "engine", options.engine());
        names.addAll(ENGINE_FAMILIES);
        names.addAll(LORA_FAMILIES);
        for (AdapterFamily f : AdapterFamily.values()) names.add(f.metricName);
        names.removeAll(hidden);
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
    List<MetricSnapshot> collect(EngineSnapshot s, List<AdapterRow> rows, Predicate<String> included,
                                 boolean withAdapterFamilies) {
        Families out = new Families(included);
        Counters c = s.counters();
        out.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", s.numRunning());
        out.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", s.numWaiting());
        out.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", s.kvCacheUsage());
        out.gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", 1, cacheConfigLabels(s));
        out.counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", c.preemptions());
        out.counter("vllm:prompt_tokens", "Number of prefill tokens processed.", c.promptTokens());
        out.counter("vllm:generation_tokens", "Number of generation tokens processed.", c.generationTokens());
        if (out.wants("vllm:request_success")) {
            CounterSnapshot.Builder b = CounterSnapshot.builder().name("vllm:request_success")
                    .help(help("vllm:request_success", "Count of successfully processed requests."));
            for (FinishReason r : FinishReason.values()) {
                b.dataPoint(CounterDataPointSnapshot.builder().labels(base.add("finished_reason", r.label()))
                        .value(c.finished().get(r)).build());
            }
            out.add(b.build());
        }
        if (s.prefixCaching()) {
            out.counter("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
                    c.prefixCache().queries());
            out.counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
                    c.prefixCache().hits());
        }
        LoraState lora = s.lora();
        if (lora != null) collectLora(s, lora, rows, out, withAdapterFamilies);
        return out.snapshots;
    }

    private void collectLora(EngineSnapshot s, LoraState lora, List<AdapterRow> rows, Families out,
                             boolean withAdapterFamilies) {
        Counters c = s.counters();
        out.gauge("vllm:lora_config_info", "Information of the LoRA configuration.", 1,
                base.merge(new String[]{"max_loras", "max_cpu_loras", "max_lora_rank", "lora_dtype"},
                        new String[]{Integer.toString(lora.maxLoras()), Integer.toString(lora.maxCpuLoras()),
                                Integer.toString(lora.maxLoraRank()), lora.loraDtype()}));
        out.gauge("vllm:max_gpu_lora_adapters", "Batch slots for LoRA adapters (max_loras).", lora.maxLoras());
        out.gauge("vllm:num_gpu_loaded_lora_adapters", "LoRA adapters in batch slots.", lora.slotsUsed());
        out.gauge("vllm:num_cpu_loaded_lora_adapters", "LoRA adapters resident in host memory and not in a slot.",
                lora.hostOnly());
        out.counterByLabel("vllm:lora_adapter_loads", "LoRA adapter loads: from disk into host memory (source=disk) "
                + "or from host memory into a batch slot (source=cpu).", "source",
                new String[]{"disk", "cpu"}, new long[]{c.lora().loads().disk(), c.lora().loads().cpu()});
        out.counterByLabel("vllm:lora_adapter_evictions", "LRU evictions of LoRA adapters from each tier.", "level",
                new String[]{"gpu", "cpu"}, new long[]{c.lora().evictions().gpu(), c.lora().evictions().cpu()});
        out.counterByLabel("vllm:lora_cache_lookups", "Times a scheduled request needed its LoRA adapter in a tier.",
                "level", new String[]{"gpu", "cpu"}, new long[]{c.lora().lookups().gpu(), c.lora().lookups().cpu()});
        out.counterByLabel("vllm:lora_cache_hits", "Times a scheduled request found its LoRA adapter already in a "
                + "tier.", "level", new String[]{"gpu", "cpu"}, new long[]{c.lora().hits().gpu(), c.lora().hits().cpu()});
        out.gauge(SERIES_OVERFLOW_ADAPTERS, "LoRA adapters beyond --max-lora-metric-series, summed into "
                + "lora_name=\"__other__\".", foldedAdapters(rows));
        if (withAdapterFamilies) {
            for (AdapterFamily family : AdapterFamily.values()) {
                if (out.wants(family.metricName)) out.add(adapterFamily(family, rows));
            }
        }
        // vLLM's format, without model_name and engine; the two lists are the two different sets
        out.gauge(LEGACY_LORA_INFO, "Running stats on lora requests.", lora.activityChangedUnixSeconds(),
                Labels.of("max_lora", Integer.toString(lora.maxLoras()),
                        "running_lora_adapters", joinDistinct(lora.runningAdapters()),
                        "waiting_lora_adapters", joinDistinct(lora.waitingAdapters())));
    }

    /** Names comma-joined without spaces, each once (an adapter loaded again may be listed twice). */
    private static String joinDistinct(List<String> names) {
        return String.join(",", new java.util.LinkedHashSet<>(names));
    }

    private static int foldedAdapters(List<AdapterRow> rows) {
        for (AdapterRow r : rows) if (r.name().equals(AdapterRow.OTHER)) return r.adapters();
        return 0;
    }

    /** A per-adapter family through the library's model, the reference for the cached text writer. */
    MetricSnapshot adapterFamily(AdapterFamily family, List<AdapterRow> rows) {
        if (family.counter) {
            CounterSnapshot.Builder b = CounterSnapshot.builder().name(family.metricName)
                    .help(help(family.metricName, family.help));
            for (AdapterRow row : rows) {
                family.emit(row, (value, extra) -> b.dataPoint(CounterDataPointSnapshot.builder()
                        .labels(rowLabels(row, extra)).value(value).build()));
            }
            return b.build();
        }
        GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(family.metricName)
                .help(help(family.metricName, family.help));
        for (AdapterRow row : rows) {
            family.emit(row, (value, extra) -> b.dataPoint(GaugeDataPointSnapshot.builder()
                    .labels(rowLabels(row, extra)).value(value).build()));
        }
        return b.build();
    }

    private Labels rowLabels(AdapterRow row, String[] extra) {
        Labels labels = base.add("lora_name", row.name());
        for (int i = 0; i + 1 < extra.length; i += 2) labels = labels.add(extra[i], extra[i + 1]);
        return labels;
    }

    /** The help text, with vLLM's notice when the family is deprecated. */
    static String help(String name, String help) {
        Deprecation deprecation = DEPRECATED.get(name);
        return deprecation == null ? help : deprecation.help(help);
    }

    /**
     * The cache as the engine runs it (the snapshot's numbers, not the requested ones). vLLM renders every cache
     * setting with Python's {@code str()}, hence {@code True}/{@code False}.
     */
    private Labels cacheConfigLabels(EngineSnapshot s) {
        return base.merge(new String[]{"block_size", "num_gpu_blocks", "enable_prefix_caching"},
                new String[]{Integer.toString(s.blockSize()), Integer.toString(s.kvBlocksTotal()),
                        s.prefixCaching() ? "True" : "False"});
    }

    /** Collects the families a scrape asked for. */
    private final class Families {
        private final Predicate<String> included;
        private final List<MetricSnapshot> snapshots = new ArrayList<>();

        Families(Predicate<String> included) {
            this.included = included;
        }

        boolean wants(String name) {
            return !hidden.contains(name) && included.test(name);
        }

        void add(MetricSnapshot snapshot) {
            snapshots.add(snapshot);
        }

        void gauge(String name, String help, double value) {
            gauge(name, help, value, base);
        }

        void gauge(String name, String help, double value, Labels labels) {
            if (!wants(name)) return;
            add(GaugeSnapshot.builder().name(name).help(help(name, help))
                    .dataPoint(GaugeDataPointSnapshot.builder().labels(labels).value(value).build()).build());
        }

        void counter(String name, String help, long value) {
            if (!wants(name)) return;
            add(CounterSnapshot.builder().name(name).help(help(name, help))
                    .dataPoint(CounterDataPointSnapshot.builder().labels(base).value(value).build()).build());
        }

        void counterByLabel(String name, String help, String label, String[] values, long[] counts) {
            if (!wants(name)) return;
            CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help(name, help));
            for (int i = 0; i < values.length; i++) {
                b.dataPoint(CounterDataPointSnapshot.builder().labels(base.add(label, values[i])).value(counts[i])
                        .build());
            }
            add(b.build());
        }
    }
}
