package dev.patchbay.metrics;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.stats.Counters;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.LoraState;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The engine-wide gauges and counters, each declared once: name, type, help, the labels beyond {@code model_name}
 * and {@code engine}, when it exists, and how its samples are read from a snapshot. The collector renders from this
 * list and lists the family names from it; the per-adapter families are {@link AdapterFamily}.
 */
enum EngineFamily {
    NUM_REQUESTS_RUNNING(
            "vllm:num_requests_running",
            MetricType.GAUGE,
            "Number of requests in model execution batches.",
            Scope.ENGINE,
            List.of(),
            (s, rows, out) -> out.sample(s.numRunning())),
    NUM_REQUESTS_WAITING(
            "vllm:num_requests_waiting",
            MetricType.GAUGE,
            "Number of requests waiting to be processed.",
            Scope.ENGINE,
            List.of(),
            (s, rows, out) -> out.sample(s.numWaiting())),
    /**
     * vLLM's split of the waiting queue: {@code deferred}, requests the scheduler skipped for their adapter (the
     * LoRA budget, or the adapter still loading); {@code capacity}, the rest. Both always written; they sum to
     * {@code vllm:num_requests_waiting}.
     */
    NUM_REQUESTS_WAITING_BY_REASON(
            "vllm:num_requests_waiting_by_reason",
            MetricType.GAUGE,
            "Number of requests waiting to be processed, by reason.",
            Scope.ENGINE,
            List.of("reason"),
            (s, rows, out) -> {
                out.sample(s.numWaiting() - s.numWaitingDeferred(), "capacity");
                out.sample(s.numWaitingDeferred(), "deferred");
            }),
    /**
     * Prompt tokens the server has yet to prefill (waiting requests, the rest of chunked prefills, requests not yet
     * scheduled), the token-level queue vLLM PR #38025 proposes under this name: a request count says as little of
     * the work ahead as two 100k-token prompts against ten short ones. Routers in front of several replicas read in it
     * the prompts each other sent.
     */
    NUM_TOKENS_WAITING(
            "vllm:num_tokens_waiting",
            MetricType.GAUGE,
            "Number of prompt tokens waiting to be prefilled.",
            Scope.ENGINE,
            List.of(),
            (s, rows, out) -> out.sample(s.tokensWaiting())),
    KV_CACHE_USAGE(
            "vllm:kv_cache_usage_perc",
            MetricType.GAUGE,
            "KV-cache usage. 1 means 100 percent usage.",
            Scope.ENGINE,
            List.of(),
            (s, rows, out) -> out.sample(s.kvCacheUsage())),
    /**
     * The cache as the engine runs it (the snapshot's numbers, not the requested ones). vLLM renders every cache
     * setting with Python's {@code str()}, hence {@code True}/{@code False}.
     */
    CACHE_CONFIG_INFO(
            "vllm:cache_config_info",
            MetricType.GAUGE,
            "Information of the LLMEngine CacheConfig",
            Scope.ENGINE,
            List.of("block_size", "num_gpu_blocks", "enable_prefix_caching"),
            (s, rows, out) -> out.sample(
                    1,
                    Integer.toString(s.blockSize()),
                    Integer.toString(s.kvBlocksTotal()),
                    s.prefixCaching() ? "True" : "False")),
    NUM_PREEMPTIONS(
            "vllm:num_preemptions",
            MetricType.COUNTER,
            "Cumulative number of preemption from the engine.",
            Scope.ENGINE,
            List.of(),
            (s, rows, out) -> out.sample(s.counters().preemptions())),
    PROMPT_TOKENS(
            "vllm:prompt_tokens",
            MetricType.COUNTER,
            "Number of prefill tokens processed.",
            Scope.ENGINE,
            List.of(),
            (s, rows, out) -> out.sample(s.counters().promptTokens())),
    GENERATION_TOKENS(
            "vllm:generation_tokens",
            MetricType.COUNTER,
            "Number of generation tokens processed.",
            Scope.ENGINE,
            List.of(),
            (s, rows, out) -> out.sample(s.counters().generationTokens())),
    REQUEST_SUCCESS(
            "vllm:request_success",
            MetricType.COUNTER,
            "Count of successfully processed requests.",
            Scope.ENGINE,
            List.of("finished_reason"),
            (s, rows, out) -> {
                for (FinishReason r : FinishReason.values())
                    out.sample(s.counters().finished().get(r), r.label());
            }),
    PREFIX_CACHE_QUERIES(
            "vllm:prefix_cache_queries",
            MetricType.COUNTER,
            "Prefix cache queries, in terms of number of queried tokens.",
            Scope.PREFIX_CACHE,
            List.of(),
            (s, rows, out) -> out.sample(s.counters().prefixCache().queries())),
    PREFIX_CACHE_HITS(
            "vllm:prefix_cache_hits",
            MetricType.COUNTER,
            "Prefix cache hits, in terms of number of cached tokens.",
            Scope.PREFIX_CACHE,
            List.of(),
            (s, rows, out) -> out.sample(s.counters().prefixCache().hits())),
    LORA_CONFIG_INFO(
            "vllm:lora_config_info",
            MetricType.GAUGE,
            "Information of the LoRA configuration.",
            Scope.LORA,
            List.of("max_loras", "max_cpu_loras", "max_lora_rank", "lora_dtype"),
            (s, rows, out) -> {
                LoraState lora = s.lora();
                out.sample(
                        1,
                        Integer.toString(lora.maxLoras()),
                        Integer.toString(lora.maxCpuLoras()),
                        Integer.toString(lora.maxLoraRank()),
                        lora.loraDtype());
            }),
    MAX_GPU_LORA_ADAPTERS(
            "vllm:max_gpu_lora_adapters",
            MetricType.GAUGE,
            "Batch slots for LoRA adapters (max_loras).",
            Scope.LORA,
            List.of(),
            (s, rows, out) -> out.sample(s.lora().maxLoras())),
    NUM_GPU_LOADED_LORA_ADAPTERS(
            "vllm:num_gpu_loaded_lora_adapters",
            MetricType.GAUGE,
            "LoRA adapters in batch slots.",
            Scope.LORA,
            List.of(),
            (s, rows, out) -> out.sample(s.lora().slotsUsed())),
    NUM_CPU_LOADED_LORA_ADAPTERS(
            "vllm:num_cpu_loaded_lora_adapters",
            MetricType.GAUGE,
            "LoRA adapters resident in host memory and not in a slot.",
            Scope.LORA,
            List.of(),
            (s, rows, out) -> out.sample(s.lora().hostOnly())),
    LORA_ADAPTER_LOADS(
            "vllm:lora_adapter_loads",
            MetricType.COUNTER,
            "LoRA adapter loads: from disk into host memory (source=disk) or from host memory into a batch slot "
                    + "(source=cpu).",
            Scope.LORA,
            List.of("source"),
            (s, rows, out) -> bySource(s.counters().lora().loads(), out)),
    LORA_ADAPTER_EVICTIONS(
            "vllm:lora_adapter_evictions",
            MetricType.COUNTER,
            "LRU evictions of LoRA adapters from each tier.",
            Scope.LORA,
            List.of("level"),
            (s, rows, out) -> byTier(s.counters().lora().evictions(), out)),
    LORA_CACHE_LOOKUPS(
            "vllm:lora_cache_lookups",
            MetricType.COUNTER,
            "Times a scheduled request needed its LoRA adapter in a tier.",
            Scope.LORA,
            List.of("level"),
            (s, rows, out) -> byTier(s.counters().lora().lookups(), out)),
    LORA_CACHE_HITS(
            "vllm:lora_cache_hits",
            MetricType.COUNTER,
            "Times a scheduled request found its LoRA adapter already in a tier.",
            Scope.LORA,
            List.of("level"),
            (s, rows, out) -> byTier(s.counters().lora().hits(), out)),
    SERIES_OVERFLOW_ADAPTERS(
            "vllm:lora_metric_series_overflow_adapters",
            MetricType.GAUGE,
            "LoRA adapters beyond --max-lora-metric-series, summed into lora_name=\"__other__\".",
            Scope.LORA,
            List.of(),
            (s, rows, out) -> out.sample(foldedAdapters(rows))),
    /** vLLM's format, without model_name and engine; the two lists are the two different sets. */
    LEGACY_LORA_INFO(
            "vllm:lora_requests_info",
            MetricType.GAUGE,
            "Running stats on lora requests.",
            Scope.LORA,
            List.of("max_lora", "running_lora_adapters", "waiting_lora_adapters"),
            (s, rows, out) -> {
                LoraState lora = s.lora();
                out.sample(
                        lora.activityChangedUnixSeconds(),
                        Integer.toString(lora.maxLoras()),
                        joinDistinct(lora.runningAdapters()),
                        joinDistinct(lora.waitingAdapters()));
            }) {
        @Override
        boolean hasBaseLabels() {
            return false;
        }

        @Override
        Deprecation deprecation() {
            return new Deprecation("0.1", "vllm:num_lora_requests_running and vllm:lora_adapter_loaded");
        }
    };

    /** When a family exists: always, with prefix caching on, or with LoRA on. */
    enum Scope {
        ENGINE,
        PREFIX_CACHE,
        LORA;

        boolean appliesTo(EngineSnapshot s) {
            return switch (this) {
                case ENGINE -> true;
                case PREFIX_CACHE -> s.prefixCaching();
                case LORA -> s.lora() != null;
            };
        }
    }

    /** Receives the samples of a family: a value and the values of its declared labels, in order. */
    interface Samples {
        void sample(double value, String... labelValues);
    }

    /** How a family's samples are read from a snapshot and its per-adapter rows (after the series cap). */
    interface Reader {
        void read(EngineSnapshot snapshot, List<AdapterRow> rows, Samples out);
    }

    final String metricName;
    final MetricType type;
    final String help;
    final Scope scope;
    /** Label names besides {@code model_name} and {@code engine}. */
    final List<String> labels;

    private final Reader reader;

    EngineFamily(String metricName, MetricType type, String help, Scope scope, List<String> labels, Reader reader) {
        this.metricName = metricName;
        this.type = type;
        this.help = help;
        this.scope = scope;
        this.labels = labels;
        this.reader = reader;
    }

    void read(EngineSnapshot snapshot, List<AdapterRow> rows, Samples out) {
        reader.read(snapshot, rows, out);
    }

    /** Whether samples carry {@code model_name} and {@code engine}. */
    boolean hasBaseLabels() {
        return true;
    }

    /** The deprecation of a family on its way out; null for the others. */
    Deprecation deprecation() {
        return null;
    }

    /** The help text, with vLLM's notice when the family is deprecated. */
    String fullHelp() {
        Deprecation deprecation = deprecation();
        return deprecation == null ? help : deprecation.help(help);
    }

    private static void bySource(Counters.BySource counts, Samples out) {
        out.sample(counts.disk(), "disk");
        out.sample(counts.cpu(), "cpu");
    }

    private static void byTier(Counters.ByTier counts, Samples out) {
        out.sample(counts.gpu(), "gpu");
        out.sample(counts.cpu(), "cpu");
    }

    /** Names comma-joined without spaces, each once (an adapter loaded again may be listed twice). */
    private static String joinDistinct(List<String> names) {
        return String.join(",", new LinkedHashSet<>(names));
    }

    private static int foldedAdapters(List<AdapterRow> rows) {
        for (AdapterRow r : rows) if (r.name().equals(AdapterRow.OTHER)) return r.adapters();
        return 0;
    }
}
