package dev.patchbay.router.scrape;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.router.prom.MalformedPageException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

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

    // The three pages below are llm-d-inference-sim v0.10.2's own (max-loras 2, adapters a1..a3), each caught with
    // several lora_requests_info series at the newest whole second.

    @Test
    void anAdapterStartedInTheSecondAnotherEndedIsSeenRunning() throws Exception {
        // a2 ran one token and ended, then a1 started, within one second: "", a1 and a2 share the newest value, the
        // empty one first on the page. Taking the first hid a1 for as long as it ran.
        String page = page("inference-sim-hidden-running.txt");
        assertThat(page.lines()
                        .filter(l -> l.startsWith("vllm:lora_requests_info{"))
                        .findFirst()
                        .orElseThrow())
                .contains("running_lora_adapters=\"\"");
        EndpointMetrics m = reader.readRoutable(page, AdapterIds.UNPOOLED);
        assertThat(m.runningRequests()).isEqualTo(1);
        assertThat(m.activeAdapters())
                .as("a1 runs; a2 ran within the second and is still loaded")
                .containsExactlyInAnyOrder("a1", "a2");
        assertThat(m.waitingAdapters()).isEmpty();
        assertThat(m.maxLora()).isEqualTo(2);
        assertThat(m.modelName()).isEqualTo("base");
        assertThat(LoraPlacement.of(m, "a1")).isEqualTo(LoraPlacement.IN_SLOT);
    }

    @Test
    void anIdleServerWhoseLastRequestsEndedInOneSecondShowsNoAdapterRunning() throws Exception {
        // a1 and a2 ran together and both ended within one second: "", a1, "a1,a2" and a2 tie; with no request on
        // the queues only the empty series can be the latest.
        EndpointMetrics m = reader.readRoutable(page("inference-sim-idle-after-tie.txt"), AdapterIds.UNPOOLED);
        assertThat(m.runningRequests()).isZero();
        assertThat(m.waitingRequests()).isZero();
        assertThat(m.activeAdapters()).isEmpty();
        assertThat(m.waitingAdapters()).isEmpty();
        assertThat(LoraPlacement.of(m, "a3")).isEqualTo(LoraPlacement.FREE_SLOT);
    }

    @Test
    void anAdapterWaitingForASlotIsSeenWaiting() throws Exception {
        // a1 then a2 took both slots and a3 queued, within one second: a1, "a1,a2" and "a1,a2" with a3 waiting tie.
        EndpointMetrics m = reader.readRoutable(page("inference-sim-waiting-adapter.txt"), AdapterIds.UNPOOLED);
        assertThat(m.runningRequests()).isEqualTo(2);
        assertThat(m.waitingRequests()).isEqualTo(1);
        assertThat(m.activeAdapters()).containsExactlyInAnyOrder("a1", "a2");
        assertThat(m.waitingAdapters()).containsExactly("a3");
        assertThat(LoraPlacement.of(m, "a3")).isEqualTo(LoraPlacement.IN_HOST);
        assertThat(LoraPlacement.of(m, "other")).isEqualTo(LoraPlacement.ALL_SLOTS_BUSY);
    }

    @Test
    void tiedLegacySeriesReadTheSameInAnyPageOrder() throws Exception {
        List<String> lines = new ArrayList<>(
                page("inference-sim-waiting-adapter.txt").lines().toList());
        EndpointMetrics asServed = reader.read(String.join("\n", lines) + "\n");
        List<String> series = lines.stream()
                .filter(l -> l.startsWith("vllm:lora_requests_info{"))
                .toList();
        lines.removeAll(series);
        List<String> reversed = new ArrayList<>(series.reversed());
        lines.addAll(reversed);
        assertThat(reader.read(String.join("\n", lines) + "\n")).isEqualTo(asServed);
    }

    @Test
    void tiedLegacySeriesThatNoneFitTheQueuesAreAllJoined() throws Exception {
        // the queue gauges and the LoRA gauge are written a moment apart: a page may catch one ahead of the other
        EndpointMetrics m = reader.read("""
                vllm:num_requests_running{model_name="base"} 0
                vllm:num_requests_waiting{model_name="base"} 0
                vllm:lora_requests_info{max_lora="2",running_lora_adapters="a",waiting_lora_adapters=""} 7
                vllm:lora_requests_info{max_lora="2",running_lora_adapters="a,b",waiting_lora_adapters=""} 7
                vllm:lora_requests_info{max_lora="2",running_lora_adapters="c",waiting_lora_adapters=""} 6
                """);
        assertThat(m.activeAdapters()).containsExactlyInAnyOrder("a", "b");
    }

    @Test
    void tiedLegacySeriesOnAPageWithoutQueuesAreAllJoined() throws Exception {
        EndpointMetrics m = reader.read("""
                vllm:lora_requests_info{max_lora="2",running_lora_adapters="",waiting_lora_adapters=""} 7
                vllm:lora_requests_info{max_lora="2",running_lora_adapters="a",waiting_lora_adapters="b"} 7
                """);
        assertThat(m.activeAdapters()).containsExactly("a");
        assertThat(m.waitingAdapters()).containsExactly("b");
    }

    @Test
    void readsTheTokensWaitingSummedOverEnginesAndMinusOneWithoutThem() throws Exception {
        EndpointMetrics m = reader.read("""
                # TYPE vllm:num_tokens_waiting gauge
                vllm:num_tokens_waiting{engine="0",model_name="m"} 1200.0
                vllm:num_tokens_waiting{engine="1",model_name="m"} 34.0
                """);
        assertThat(m.tokensWaiting()).isEqualTo(1234);
        assertThat(reader.read("vllm:num_requests_waiting{model_name=\"m\"} 1\n")
                        .tokensWaiting())
                .isEqualTo(-1);
    }

    @Test
    void readsDeferredRequestsFromVllmsWaitingByReason() throws Exception {
        EndpointMetrics m = reader.read("""
                # HELP vllm:num_requests_waiting Number of requests waiting to be processed.
                # TYPE vllm:num_requests_waiting gauge
                vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 5.0
                # HELP vllm:num_requests_waiting_by_reason Number of requests waiting to be processed, by reason.
                # TYPE vllm:num_requests_waiting_by_reason gauge
                vllm:num_requests_waiting_by_reason{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct",reason="capacity"} 3.0
                vllm:num_requests_waiting_by_reason{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct",reason="deferred"} 2.0
                """);
        assertThat(m.hasWaitingByReason()).isTrue();
        assertThat(m.waitingDeferred()).isEqualTo(2);
        assertThat(m.waitingRequests()).isEqualTo(5);
        assertThat(m.hasResidencyFamilies()).isFalse();

        // Data parallel: one series per engine, summed as the queues are.
        EndpointMetrics twoEngines = reader.read("""
                vllm:num_requests_waiting_by_reason{engine="0",model_name="m",reason="deferred"} 1.0
                vllm:num_requests_waiting_by_reason{engine="1",model_name="m",reason="capacity"} 4.0
                vllm:num_requests_waiting_by_reason{engine="1",model_name="m",reason="deferred"} 3.0
                """);
        assertThat(twoEngines.waitingDeferred()).isEqualTo(4);

        EndpointMetrics without = reader.read("vllm:num_requests_waiting{model_name=\"m\"} 1\n");
        assertThat(without.hasWaitingByReason()).isFalse();
        assertThat(without.waitingDeferred()).isZero();
        assertThat(MetricFamilies.QUERY).contains("name%5B%5D=vllm%3Anum_requests_waiting_by_reason");
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
        assertThat(reader.read("vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\n")
                        .kvCacheUsage())
                .isEqualTo(0.5);
    }

    private static final String LOAD = """
            vllm:num_requests_waiting{model_name="m"} 1
            vllm:num_requests_running{model_name="m"} 2
            vllm:kv_cache_usage_perc{model_name="m"} 0.3
            """;

    static Stream<Arguments> pagesThatDoNotShowTheLoad() {
        return Stream.of(
                Arguments.of("empty", "", UnusablePageException.Problem.MISSING_FAMILY),
                Arguments.of(
                        "only comments",
                        "# TYPE vllm:num_requests_waiting gauge\n",
                        UnusablePageException.Problem.MISSING_FAMILY),
                Arguments.of(
                        "no running queue",
                        LOAD.replace("vllm:num_requests_running{model_name=\"m\"} 2\n", ""),
                        UnusablePageException.Problem.MISSING_FAMILY),
                Arguments.of(
                        "no KV usage under either name",
                        LOAD.replace("vllm:kv_cache_usage_perc{model_name=\"m\"} 0.3\n", ""),
                        UnusablePageException.Problem.MISSING_FAMILY),
                Arguments.of(
                        "waiting NaN", LOAD.replace("} 1\n", "} NaN\n"), UnusablePageException.Problem.INVALID_VALUE),
                Arguments.of(
                        "running +Inf", LOAD.replace("} 2\n", "} +Inf\n"), UnusablePageException.Problem.INVALID_VALUE),
                Arguments.of(
                        "negative waiting",
                        LOAD.replace("} 1\n", "} -1\n"),
                        UnusablePageException.Problem.INVALID_VALUE),
                Arguments.of(
                        "negative running",
                        LOAD.replace("} 2\n", "} -3\n"),
                        UnusablePageException.Problem.INVALID_VALUE),
                Arguments.of(
                        "negative KV usage",
                        LOAD.replace("} 0.3\n", "} -0.5\n"),
                        UnusablePageException.Problem.INVALID_VALUE),
                Arguments.of(
                        "one of two engines NaN",
                        LOAD + "vllm:num_requests_waiting{engine=\"1\",model_name=\"m\"} NaN\n",
                        UnusablePageException.Problem.INVALID_VALUE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pagesThatDoNotShowTheLoad")
    void aPageThatDoesNotShowTheLoadIsNotRoutable(String what, String page, UnusablePageException.Problem problem)
            throws Exception {
        assertThatThrownBy(() -> reader.readRoutable(page, AdapterIds.UNPOOLED))
                .isInstanceOfSatisfying(
                        UnusablePageException.class,
                        e -> assertThat(e.problem()).isEqualTo(problem));
    }

    @Test
    void routablePagesAreReadAsUsual() throws Exception {
        assertThat(reader.readRoutable(LOAD, AdapterIds.UNPOOLED)).isEqualTo(reader.read(LOAD));
        assertThat(reader.readRoutable(page("vllm-full.txt"), AdapterIds.UNPOOLED)
                        .waitingRequests())
                .isEqualTo(7);
        assertThat(reader.readRoutable(page("patchbay.txt"), AdapterIds.UNPOOLED)
                        .hasResidencyFamilies())
                .isTrue();
        String olderVllm = LOAD.replace("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc");
        assertThat(reader.readRoutable(olderVllm, AdapterIds.UNPOOLED).kvCacheUsage())
                .isEqualTo(0.3);
        assertThatThrownBy(
                        () -> reader.readRoutable("vllm:num_requests_waiting{model_name=\"m} 1\n", AdapterIds.UNPOOLED))
                .isInstanceOf(MalformedPageException.class);
    }

    @Test
    void malformedPageIsAnError() {
        assertThatThrownBy(() -> reader.read("vllm:num_requests_waiting{model_name=\"m} 1\n"))
                .isInstanceOf(MalformedPageException.class);
    }
}
