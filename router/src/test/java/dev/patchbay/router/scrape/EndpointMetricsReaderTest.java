package dev.patchbay.router.scrape;

import dev.patchbay.router.prom.MalformedPageException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EndpointMetricsReaderTest {
    private final EndpointMetricsReader reader = new EndpointMetricsReader();

    static String page(String name) throws IOException {
        try (InputStream in = EndpointMetricsReaderTest.class.getResourceAsStream("/pages/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void readsAFullVllmPageTakingTheLatestLegacySeries() throws Exception {
        EndpointMetrics m = reader.read(page("vllm-full.txt"));
        assertThat(m.modelName()).isEqualTo("meta-llama/Llama-3.1-8B-Instruct");
        assertThat(m.runningRequests()).isEqualTo(3);
        assertThat(m.waitingRequests()).isEqualTo(7);
        assertThat(m.kvCacheUsage()).isEqualTo(0.4375);
        // the series with the largest value, split on commas, trimmed, empties dropped
        assertThat(m.activeAdapters()).containsExactlyInAnyOrder("sql-lora", "chat-lora");
        assertThat(m.waitingAdapters()).containsExactly("summ-lora");
        assertThat(m.maxLora()).isEqualTo(4);
        assertThat(m.hasResidencyFamilies()).isFalse();
        assertThat(m.residency()).isEmpty();
    }

    @Test
    void legacySeriesWithLabelsInVllmOrderAndTimestamps() throws Exception {
        EndpointMetrics m = reader.read("""
                # TYPE vllm:lora_requests_info gauge
                vllm:lora_requests_info{max_lora="2",waiting_lora_adapters="",running_lora_adapters="a"} 1.700000001e+09 1700000001000
                vllm:lora_requests_info{running_lora_adapters="b,c",max_lora="2",waiting_lora_adapters="d"} 1.700000003e+09 1700000003000
                vllm:lora_requests_info{waiting_lora_adapters="",max_lora="2",running_lora_adapters="e"} 1.700000002e+09
                """);
        assertThat(m.activeAdapters()).containsExactlyInAnyOrder("b", "c");
        assertThat(m.waitingAdapters()).containsExactly("d");
        assertThat(m.maxLora()).isEqualTo(2);
    }

    @Test
    void newestEmptyLegacySeriesMeansNoActiveAdapters() throws Exception {
        EndpointMetrics m = reader.read("""
                vllm:lora_requests_info{max_lora="2",running_lora_adapters="a",waiting_lora_adapters=""} 10
                vllm:lora_requests_info{max_lora="2",running_lora_adapters="",waiting_lora_adapters=""} 20
                """);
        assertThat(m.activeAdapters()).isEmpty();
        assertThat(m.maxLora()).isEqualTo(2);
    }

    @Test
    void missingLegacyFamilyMeansNoAdapters() throws Exception {
        EndpointMetrics m = reader.read("vllm:num_requests_waiting{model_name=\"m\"} 1\n");
        assertThat(m.activeAdapters()).isEmpty();
        assertThat(m.waitingAdapters()).isEmpty();
        assertThat(m.maxLora()).isZero();
        assertThat(m.waitingRequests()).isEqualTo(1);
        assertThat(m.hasResidencyFamilies()).isFalse();
    }

    @Test
    void readsPatchbayFamilies() throws Exception {
        EndpointMetrics m = reader.read(page("patchbay.txt"));
        assertThat(m.modelName()).isEqualTo("base-8b");
        assertThat(m.hasResidencyFamilies()).isTrue();
        assertThat(m.gpuSlots()).isEqualTo(3);
        assertThat(m.gpuSlotsUsed()).isEqualTo(2);
        assertThat(m.adapterRunning("sql")).isEqualTo(3);
        assertThat(m.adapterRunning("idle")).isZero();
        assertThat(m.adapterWaiting("chat")).isEqualTo(2);
        assertThat(m.residency()).containsOnlyKeys("sql", "idle", "chat");
        assertThat(m.residency().get("sql")).isEqualTo(new AdapterResidency(true, false, 16));
        assertThat(m.residency().get("idle")).isEqualTo(new AdapterResidency(true, true, 8));
        assertThat(m.residency().get("chat")).isEqualTo(new AdapterResidency(false, false, 64));
        assertThat(m.activeAdapters()).containsExactly("sql");
        assertThat(m.waitingAdapters()).containsExactly("chat");
        assertThat(m.knownAdapters()).containsExactlyInAnyOrder("sql", "idle", "chat");
    }

    @Test
    void slotsUsedFallsBackToCountingGpuResidentAdapters() throws Exception {
        EndpointMetrics m = reader.read("""
                vllm:max_gpu_lora_adapters 4
                vllm:lora_adapter_loaded{adapter_name="x",level="gpu",pinned="false"} 1
                vllm:lora_adapter_loaded{adapter_name="y",level="cpu",pinned="false"} 1
                """);
        assertThat(m.gpuSlots()).isEqualTo(4);
        assertThat(m.gpuSlotsUsed()).isEqualTo(1);
        assertThat(m.residency().get("x").inSlot()).isTrue();
        assertThat(m.residency().get("y").inSlot()).isFalse();
    }

    @Test
    void oldKvCacheNameIsRead() throws Exception {
        assertThat(reader.read("vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\n").kvCacheUsage()).isEqualTo(0.5);
    }

    private static final String LOAD = """
            vllm:num_requests_waiting{model_name="m"} 1
            vllm:num_requests_running{model_name="m"} 2
            vllm:kv_cache_usage_perc{model_name="m"} 0.3
            """;

    static Stream<Arguments> pagesThatDoNotShowTheLoad() {
        return Stream.of(
                Arguments.of("empty", "", UnusablePageException.Problem.MISSING_FAMILY),
                Arguments.of("only comments", "# TYPE vllm:num_requests_waiting gauge\n",
                        UnusablePageException.Problem.MISSING_FAMILY),
                Arguments.of("no running queue", LOAD.replace("vllm:num_requests_running{model_name=\"m\"} 2\n", ""),
                        UnusablePageException.Problem.MISSING_FAMILY),
                Arguments.of("no KV usage under either name", LOAD.replace("vllm:kv_cache_usage_perc{model_name=\"m\"} 0.3\n", ""),
                        UnusablePageException.Problem.MISSING_FAMILY),
                Arguments.of("waiting NaN", LOAD.replace("} 1\n", "} NaN\n"), UnusablePageException.Problem.INVALID_VALUE),
                Arguments.of("running +Inf", LOAD.replace("} 2\n", "} +Inf\n"), UnusablePageException.Problem.INVALID_VALUE),
                Arguments.of("negative waiting", LOAD.replace("} 1\n", "} -1\n"), UnusablePageException.Problem.INVALID_VALUE),
                Arguments.of("negative running", LOAD.replace("} 2\n", "} -3\n"), UnusablePageException.Problem.INVALID_VALUE),
                Arguments.of("negative KV usage", LOAD.replace("} 0.3\n", "} -0.5\n"), UnusablePageException.Problem.INVALID_VALUE),
                Arguments.of("one of two engines NaN", LOAD + "vllm:num_requests_waiting{engine=\"1\",model_name=\"m\"} NaN\n",
                        UnusablePageException.Problem.INVALID_VALUE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pagesThatDoNotShowTheLoad")
    void aPageThatDoesNotShowTheLoadIsNotRoutable(String what, String page, UnusablePageException.Problem problem)
            throws Exception {
        assertThatThrownBy(() -> reader.readRoutable(page, AdapterIds.UNPOOLED))
                .isInstanceOfSatisfying(UnusablePageException.class, e -> assertThat(e.problem()).isEqualTo(problem));
    }

    @Test
    void routablePagesAreReadAsUsual() throws Exception {
        assertThat(reader.readRoutable(LOAD, AdapterIds.UNPOOLED)).isEqualTo(reader.read(LOAD));
        assertThat(reader.readRoutable(page("vllm-full.txt"), AdapterIds.UNPOOLED).waitingRequests()).isEqualTo(7);
        assertThat(reader.readRoutable(page("patchbay.txt"), AdapterIds.UNPOOLED).hasResidencyFamilies()).isTrue();
        String olderVllm = LOAD.replace("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc");
        assertThat(reader.readRoutable(olderVllm, AdapterIds.UNPOOLED).kvCacheUsage()).isEqualTo(0.3);
        assertThatThrownBy(() -> reader.readRoutable("vllm:num_requests_waiting{model_name=\"m} 1\n", AdapterIds.UNPOOLED))
                .isInstanceOf(MalformedPageException.class);
    }

    @Test
    void malformedPageIsAnError() {
        assertThatThrownBy(() -> reader.read("vllm:num_requests_waiting{model_name=\"m} 1\n"))
                .isInstanceOf(MalformedPageException.class);
    }
}
