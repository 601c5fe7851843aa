package dev.patchbay.metrics;

import static dev.patchbay.metrics.Fixtures.MODEL;
import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.FinishCounts;
import dev.patchbay.engine.stats.StepStats;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Names, types, label names and buckets exactly as the metrics contract lists them. */
class FamiliesTest {

    private static final Set<String> BASE = Set.of("model_name", "engine");

    private static Page page(EngineSnapshot snapshot, MetricsOptions options) {
        EngineMetrics metrics = new EngineMetrics(options, () -> snapshot);
        metrics.accept(snapshot);
        return Page.parse(metrics.scrape().text());
    }

    private static Page loraPage() {
        EngineSnapshot s = new Fixtures.Snap()
                .running(3)
                .waiting(2)
                .adapter(Fixtures.adapter(
                        "alpha", 2, 1, Level.GPU, true, 16, 4096, 120, 33, new FinishCounts(5, 1, 2, 0)))
                .adapter(Fixtures.adapter("beta", 0, 1, Level.NONE))
                .adapter(Fixtures.adapter("gamma", 0, 0, Level.CPU))
                .step(Fixtures.step(
                        64,
                        2,
                        List.of(new StepStats.FirstToken("alpha", 0.05)),
                        List.of(0.02),
                        List.of(Fixtures.finished("alpha", 1.2)),
                        List.of(new AdapterLoad("alpha", AdapterLoad.Source.DISK, 0.3))))
                .build();
        return page(s, Fixtures.options(true).withEnableLoraLatencyMetrics(true));
    }

    private static Set<String> labelNames(Page page, String sample) {
        assertThat(page.samples(sample)).as(sample).isNotEmpty();
        Set<String> names = new TreeSet<>();
        page.samples(sample).forEach(s -> names.addAll(s.labels().keySet()));
        return names;
    }

    private static void assertFamily(Page page, String family, String type, Set<String> extraLabels) {
        assertThat(page.types()).as(family).containsEntry(family, type);
        String sample = type.equals("histogram") ? family + "_count" : family;
        Set<String> expected = new TreeSet<>(BASE);
        expected.addAll(extraLabels);
        assertThat(labelNames(page, sample)).as(family).isEqualTo(expected);
    }

    private static List<Double> buckets(Page page, String histogram) {
        return page.samples(histogram + "_bucket").stream()
                .filter(s -> s.label("le") != null)
                .map(s -> s.label("le").equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(s.label("le")))
                .distinct()
                .toList();
    }

    private static List<Double> withInf(double... bounds) {
        List<Double> out = new ArrayList<>(Arrays.stream(bounds).boxed().toList());
        out.add(Double.POSITIVE_INFINITY);
        return out;
    }

    @Test
    void engineGaugesAndCountersCarryModelNameAndEngine() {
        Page page = loraPage();
        for (String gauge :
                List.of("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc")) {
            assertFamily(page, gauge, "gauge", Set.of());
        }
        for (String counter : List.of(
                "vllm:num_preemptions_total",
                "vllm:prompt_tokens_total",
                "vllm:generation_tokens_total",
                "vllm:prefix_cache_queries_total",
                "vllm:prefix_cache_hits_total")) {
            assertFamily(page, counter, "counter", Set.of());
        }
        assertThat(page.value("vllm:num_requests_running", "model_name", MODEL, "engine", "0"))
                .isEqualTo(3);
        assertThat(page.value("vllm:kv_cache_usage_perc")).isEqualTo(0.25);
        assertFamily(
                page,
                "vllm:cache_config_info",
                "gauge",
                Set.of("block_size", "num_gpu_blocks", "enable_prefix_caching"));
        assertThat(page.find(
                        "vllm:cache_config_info",
                        "block_size",
                        "16",
                        "num_gpu_blocks",
                        "1000",
                        "enable_prefix_caching",
                        "True"))
                .get()
                .extracting(Page.Sample::value)
                .isEqualTo(1.0);
    }

    /**
     * vLLM's split of the waiting queue: both reasons always written, with and without LoRA, and they add up to
     * {@code vllm:num_requests_waiting}.
     */
    @Test
    void waitingByReasonSplitsTheWaitingQueueIntoCapacityAndDeferred() {
        Page page = page(new Fixtures.Snap().running(3).waiting(5).deferred(2).build(), Fixtures.options(true));
        assertFamily(page, "vllm:num_requests_waiting_by_reason", "gauge", Set.of("reason"));
        assertThat(page.labelValues("vllm:num_requests_waiting_by_reason", "reason"))
                .containsExactly("capacity", "deferred");
        double capacity = page.value("vllm:num_requests_waiting_by_reason", "reason", "capacity");
        double deferred = page.value(
                "vllm:num_requests_waiting_by_reason", "reason", "deferred", "model_name", MODEL, "engine", "0");
        assertThat(capacity).isEqualTo(3);
        assertThat(deferred).isEqualTo(2);
        assertThat(capacity + deferred).isEqualTo(page.value("vllm:num_requests_waiting"));
        assertThat(page.helps().get("vllm:num_requests_waiting_by_reason"))
                .isEqualTo("Number of requests waiting to be processed, by reason.");

        Page idle = page(new Fixtures.Snap().lora(false).build(), Fixtures.options(false));
        assertThat(idle.samples("vllm:num_requests_waiting_by_reason"))
                .extracting(Page.Sample::value)
                .containsExactly(0.0, 0.0);
    }

    /** The token-level queue: prompt tokens still to prefill, always written. */
    @Test
    void tokensWaitingIsThePrefillStillToDo() {
        Page page = page(new Fixtures.Snap().waiting(2).tokensWaiting(4_321).build(), Fixtures.options(true));
        assertFamily(page, "vllm:num_tokens_waiting", "gauge", Set.of());
        assertThat(page.value("vllm:num_tokens_waiting")).isEqualTo(4_321);
        Page idle = page(new Fixtures.Snap().lora(false).build(), Fixtures.options(false));
        assertThat(idle.value("vllm:num_tokens_waiting")).isZero();
    }

    @Test
    void requestSuccessHasOneChildPerReasonFromTheStart() {
        EngineSnapshot s =
                new Fixtures.Snap().lora(false).counters(Fixtures.counters(0)).build();
        Page page = page(s, Fixtures.options(false));
        assertFamily(page, "vllm:request_success_total", "counter", Set.of("finished_reason"));
        assertThat(page.labelValues("vllm:request_success_total", "finished_reason"))
                .containsExactlyInAnyOrder("stop", "length", "abort", "error");
        assertThat(page.samples("vllm:request_success_total")).allMatch(x -> x.value() == 0);
    }

    @Test
    void histogramsHaveVllmBuckets() {
        Page page = loraPage();
        double[] ttft = {
            0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640,
            2560
        };
        double[] itl = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80};
        double[] latency = {0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680
        };
        double[] tokens = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000};
        assertThat(buckets(page, "vllm:time_to_first_token_seconds")).isEqualTo(withInf(ttft));
        assertThat(buckets(page, "vllm:inter_token_latency_seconds")).isEqualTo(withInf(itl));
        assertThat(buckets(page, "vllm:request_time_per_output_token_seconds")).isEqualTo(withInf(itl));
        for (String h : List.of(
                "vllm:e2e_request_latency_seconds",
                "vllm:request_queue_time_seconds",
                "vllm:request_inference_time_seconds",
                "vllm:request_prefill_time_seconds",
                "vllm:request_decode_time_seconds")) {
            assertThat(buckets(page, h)).as(h).isEqualTo(withInf(latency));
        }
        assertThat(buckets(page, "vllm:iteration_tokens_total"))
                .isEqualTo(withInf(1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384));
        for (String h : List.of(
                "vllm:request_prompt_tokens",
                "vllm:request_generation_tokens",
                "vllm:request_max_num_generation_tokens",
                "vllm:request_params_max_tokens")) {
            assertThat(buckets(page, h)).as(h).isEqualTo(withInf(tokens));
        }
        assertThat(buckets(page, "vllm:request_params_n")).isEqualTo(withInf(1, 2, 5, 10, 20));
        assertThat(buckets(page, "vllm:iteration_lora_adapters")).isEqualTo(withInf(0, 1, 2, 4, 8, 16, 32, 64));
        assertThat(buckets(page, "vllm:lora_time_to_first_token_seconds")).isEqualTo(withInf(ttft));
        assertThat(buckets(page, "vllm:lora_e2e_request_latency_seconds")).isEqualTo(withInf(latency));
        for (String h : List.of(
                "vllm:time_to_first_token_seconds",
                "vllm:e2e_request_latency_seconds",
                "vllm:iteration_tokens_total",
                "vllm:request_params_n",
                "vllm:iteration_lora_adapters")) {
            assertFamily(page, h, "histogram", Set.of());
        }
    }

    @Test
    void oneTwoFiveBucketsStopAtMaxModelLen() {
        assertThat(Buckets.oneTwoFive(4096)).containsExactly(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000);
        assertThat(Buckets.oneTwoFive(5000)).endsWith(2000, 5000);
        assertThat(Buckets.oneTwoFive(1)).containsExactly(1);
    }

    @Test
    void loraFamiliesHaveTheirLabels() {
        Page page = loraPage();
        assertFamily(
                page,
                "vllm:lora_config_info",
                "gauge",
                Set.of("max_loras", "max_cpu_loras", "max_lora_rank", "lora_dtype"));
        assertThat(page.value(
                        "vllm:lora_config_info",
                        "max_loras",
                        "4",
                        "max_cpu_loras",
                        "8",
                        "max_lora_rank",
                        "16",
                        "lora_dtype",
                        "auto"))
                .isEqualTo(1);
        assertFamily(page, "vllm:num_lora_requests_running", "gauge", Set.of("lora_name"));
        assertFamily(page, "vllm:num_lora_requests_waiting", "gauge", Set.of("lora_name"));
        assertFamily(page, "vllm:lora_adapter_loaded", "gauge", Set.of("lora_name", "level", "pinned", "rank"));
        assertThat(page.value(
                        "vllm:lora_adapter_loaded",
                        "lora_name",
                        "alpha",
                        "level",
                        "gpu",
                        "pinned",
                        "true",
                        "rank",
                        "16"))
                .isEqualTo(1);
        assertThat(page.value("vllm:lora_adapter_loaded", "lora_name", "gamma", "level", "cpu"))
                .isEqualTo(1);
        assertThat(page.find("vllm:lora_adapter_loaded", "lora_name", "beta")).isEmpty();
        for (String g : List.of(
                "vllm:max_gpu_lora_adapters",
                "vllm:num_gpu_loaded_lora_adapters",
                "vllm:num_cpu_loaded_lora_adapters")) {
            assertFamily(page, g, "gauge", Set.of());
        }
        assertThat(page.value("vllm:max_gpu_lora_adapters")).isEqualTo(4);
        assertThat(page.value("vllm:num_gpu_loaded_lora_adapters")).isEqualTo(1);
        assertThat(page.value("vllm:num_cpu_loaded_lora_adapters")).isEqualTo(1);
        assertFamily(page, "vllm:lora_adapter_load_seconds", "histogram", Set.of("source"));
        assertThat(page.labelValues("vllm:lora_adapter_load_seconds_count", "source"))
                .containsExactlyInAnyOrder("disk", "cpu");
        assertFamily(page, "vllm:lora_adapter_loads_total", "counter", Set.of("source"));
        assertThat(page.value("vllm:lora_adapter_loads_total", "source", "disk"))
                .isEqualTo(1);
        assertThat(page.value("vllm:lora_adapter_loads_total", "source", "cpu")).isEqualTo(2);
        assertFamily(page, "vllm:lora_adapter_evictions_total", "counter", Set.of("level"));
        assertThat(page.value("vllm:lora_adapter_evictions_total", "level", "gpu"))
                .isEqualTo(3);
        assertFamily(page, "vllm:lora_cache_lookups_total", "counter", Set.of("level"));
        assertFamily(page, "vllm:lora_cache_hits_total", "counter", Set.of("level"));
        assertThat(page.value("vllm:lora_cache_hits_total", "level", "cpu")).isEqualTo(8);
        assertFamily(page, "vllm:lora_adapter_memory_bytes", "gauge", Set.of("lora_name"));
        assertThat(page.value("vllm:lora_adapter_memory_bytes", "lora_name", "alpha"))
                .isEqualTo(4096);
        assertFamily(page, "vllm:lora_requests_total", "counter", Set.of("lora_name", "finished_reason"));
        assertThat(page.value("vllm:lora_requests_total", "lora_name", "alpha", "finished_reason", "abort"))
                .isEqualTo(2);
        assertFamily(page, "vllm:lora_prompt_tokens_total", "counter", Set.of("lora_name"));
        assertFamily(page, "vllm:lora_generation_tokens_total", "counter", Set.of("lora_name"));
        assertThat(page.value("vllm:lora_generation_tokens_total", "lora_name", "alpha"))
                .isEqualTo(33);
        assertFamily(page, "vllm:iteration_lora_adapters", "histogram", Set.of());
        assertFamily(page, "vllm:lora_time_to_first_token_seconds", "histogram", Set.of("lora_name"));
        assertFamily(page, "vllm:lora_e2e_request_latency_seconds", "histogram", Set.of("lora_name"));
    }

    @Test
    void legacyGaugeHasOnlyItsThreeLabels() {
        Page page = loraPage();
        assertThat(page.types()).containsEntry("vllm:lora_requests_info", "gauge");
        assertThat(labelNames(page, "vllm:lora_requests_info"))
                .containsExactlyInAnyOrder("max_lora", "running_lora_adapters", "waiting_lora_adapters");
    }

    @Test
    void withoutLoraThereIsNoLoraFamily() {
        EngineSnapshot s = new Fixtures.Snap().lora(false).prefixCaching(false).build();
        Page page = page(s, Fixtures.options(false));
        assertThat(page.types().keySet()).noneMatch(name -> name.contains("lora"));
        assertThat(page.types().keySet()).noneMatch(name -> name.contains("prefix_cache"));
        assertThat(page.types()).containsKey("vllm:num_requests_running");
    }

    @Test
    void latencyPerAdapterIsOffByDefault() {
        EngineSnapshot s = new Fixtures.Snap()
                .adapter(Fixtures.adapter("alpha", 1, 0, Level.GPU))
                .build();
        Page page = page(s, Fixtures.options(true));
        assertThat(page.types())
                .doesNotContainKeys("vllm:lora_time_to_first_token_seconds", "vllm:lora_e2e_request_latency_seconds");
    }
}
