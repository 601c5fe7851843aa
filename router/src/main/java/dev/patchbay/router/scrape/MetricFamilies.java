package dev.patchbay.router.scrape;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/** The metric families the router reads, and the scrape query that asks for only those. */
public final class MetricFamilies {
    public static final String WAITING = "vllm:num_requests_waiting";
    /** vLLM's split of the waiting queue, {@code reason="capacity"} and {@code reason="deferred"}. */
    public static final String WAITING_BY_REASON = "vllm:num_requests_waiting_by_reason";

    /** Prompt tokens yet to prefill (vLLM PR #38025's name; Patchbay serves it). */
    public static final String TOKENS_WAITING = "vllm:num_tokens_waiting";

    public static final String RUNNING = "vllm:num_requests_running";
    public static final String KV_USAGE = "vllm:kv_cache_usage_perc";
    /** vLLM's name for KV usage before it was renamed; still served by older versions. */
    public static final String KV_USAGE_OLD = "vllm:gpu_cache_usage_perc";

    public static final String LORA_INFO = "vllm:lora_requests_info";
    public static final String LORA_RUNNING = "vllm:num_lora_requests_running";
    public static final String LORA_WAITING = "vllm:num_lora_requests_waiting";
    public static final String LORA_LOADED = "vllm:lora_adapter_loaded";
    public static final String MAX_GPU_LORAS = "vllm:max_gpu_lora_adapters";
    public static final String GPU_LORAS_LOADED = "vllm:num_gpu_loaded_lora_adapters";

    public static final List<String> ALL = List.of(
            WAITING,
            WAITING_BY_REASON,
            TOKENS_WAITING,
            RUNNING,
            KV_USAGE,
            KV_USAGE_OLD,
            LORA_INFO,
            LORA_RUNNING,
            LORA_WAITING,
            LORA_LOADED,
            MAX_GPU_LORAS,
            GPU_LORAS_LOADED);

    public static final Set<String> ALL_SET = Set.copyOf(ALL);

    /** {@code name[]=...&name[]=...}, URL-encoded. */
    public static final String QUERY = ALL.stream()
            .map(name -> URLEncoder.encode("name[]", StandardCharsets.UTF_8) + "="
                    + URLEncoder.encode(name, StandardCharsets.UTF_8))
            .collect(Collectors.joining("&"));

    private MetricFamilies() {}
}
