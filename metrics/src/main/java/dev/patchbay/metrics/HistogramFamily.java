package dev.patchbay.metrics;

import java.util.List;
import java.util.function.Function;

/**
 * The histograms, each declared once: name, help, buckets, the labels beyond {@code model_name} and {@code engine},
 * and which settings make it exist. {@link StepObserver} registers them from this list and observes the step events
 * into them.
 */
enum HistogramFamily {
    TIME_TO_FIRST_TOKEN(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            Scope.ENGINE,
            List.of(),
            o -> Buckets.TIME_TO_FIRST_TOKEN),
    INTER_TOKEN_LATENCY(
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            Scope.ENGINE,
            List.of(),
            o -> Buckets.INTER_TOKEN),
    TIME_PER_OUTPUT_TOKEN(
            "vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.",
            Scope.ENGINE,
            List.of(),
            o -> Buckets.INTER_TOKEN),
    E2E_LATENCY(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            Scope.ENGINE,
            List.of(),
            o -> Buckets.REQUEST_LATENCY),
    QUEUE_TIME(
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            Scope.ENGINE,
            List.of(),
            o -> Buckets.REQUEST_LATENCY),
    INFERENCE_TIME(
            "vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.",
            Scope.ENGINE,
            List.of(),
            o -> Buckets.REQUEST_LATENCY),
    PREFILL_TIME(
            "vllm:request_prefill_time_seconds",
            "Histogram of time spent in PREFILL phase for request.",
            Scope.ENGINE,
            List.of(),
            o -> Buckets.REQUEST_LATENCY),
    DECODE_TIME(
            "vllm:request_decode_time_seconds",
            "Histogram of time spent in DECODE phase for request.",
            Scope.ENGINE,
            List.of(),
            o -> Buckets.REQUEST_LATENCY),
    ITERATION_TOKENS(
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.",
            Scope.ENGINE,
            List.of(),
            o -> Buckets.ITERATION_TOKENS),
    PROMPT_TOKENS(
            "vllm:request_prompt_tokens",
            "Number of prefill tokens processed.",
            Scope.ENGINE,
            List.of(),
            HistogramFamily::tokenBuckets),
    GENERATION_TOKENS(
            "vllm:request_generation_tokens",
            "Number of generation tokens processed.",
            Scope.ENGINE,
            List.of(),
            HistogramFamily::tokenBuckets),
    MAX_GENERATION_TOKENS(
            "vllm:request_max_num_generation_tokens",
            "Histogram of maximum number of requested generation tokens.",
            Scope.ENGINE,
            List.of(),
            HistogramFamily::tokenBuckets),
    PARAMS_N(
            "vllm:request_params_n",
            "Histogram of the n request parameter.",
            Scope.ENGINE,
            List.of(),
            o -> Buckets.REQUEST_PARAMS_N),
    PARAMS_MAX_TOKENS(
            "vllm:request_params_max_tokens",
            "Histogram of the max_tokens request parameter.",
            Scope.ENGINE,
            List.of(),
            HistogramFamily::tokenBuckets),
    ITERATION_LORA_ADAPTERS(
            "vllm:iteration_lora_adapters",
            "Histogram of distinct LoRA adapters in each scheduled batch.",
            Scope.LORA,
            List.of(),
            o -> Buckets.ITERATION_LORA_ADAPTERS),
    ADAPTER_LOAD(
            "vllm:lora_adapter_load_seconds",
            "Time to bring a LoRA adapter in: from disk into host memory "
                    + "(source=disk) or from host memory into a batch slot (source=cpu).",
            Scope.LORA,
            List.of("source"),
            o -> Buckets.ADAPTER_LOAD),
    LORA_TIME_TO_FIRST_TOKEN(
            "vllm:lora_time_to_first_token_seconds",
            "Histogram of time to first token in seconds, per LoRA adapter.",
            Scope.LORA_LATENCY,
            List.of("lora_name"),
            o -> Buckets.TIME_TO_FIRST_TOKEN),
    LORA_E2E_LATENCY(
            "vllm:lora_e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds, per LoRA adapter.",
            Scope.LORA_LATENCY,
            List.of("lora_name"),
            o -> Buckets.REQUEST_LATENCY);

    /** Which settings make a histogram exist: always, {@code --enable-lora}, or that and the latency flag. */
    enum Scope {
        ENGINE,
        LORA,
        LORA_LATENCY;

        boolean appliesTo(MetricsOptions o) {
            return switch (this) {
                case ENGINE -> true;
                case LORA -> o.enableLora();
                case LORA_LATENCY -> o.enableLora() && o.enableLoraLatencyMetrics();
            };
        }
    }

    final String metricName;
    final String help;
    final Scope scope;
    /** Label names besides {@code model_name} and {@code engine}. */
    final List<String> labels;

    private final Function<MetricsOptions, double[]> buckets;

    HistogramFamily(
            String metricName,
            String help,
            Scope scope,
            List<String> labels,
            Function<MetricsOptions, double[]> buckets) {
        this.metricName = metricName;
        this.help = help;
        this.scope = scope;
        this.labels = labels;
        this.buckets = buckets;
    }

    double[] buckets(MetricsOptions options) {
        return buckets.apply(options);
    }

    /** vLLM's token-count buckets stop at the model's context length. */
    private static double[] tokenBuckets(MetricsOptions options) {
        return Buckets.oneTwoFive(options.maxModelLen());
    }
}
