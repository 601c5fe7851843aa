package dev.patchbay.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.FinishedRequest;
import dev.patchbay.engine.stats.StepStats;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Histograms accumulate the events of every step. */
class StepObserverTest {

    private final AtomicReference<EngineSnapshot> latest = new AtomicReference<>();

    private EngineMetrics metrics(MetricsOptions options) {
        return new EngineMetrics(options, latest::get);
    }

    private void publish(EngineMetrics metrics, EngineSnapshot snapshot) {
        latest.set(snapshot);
        metrics.accept(snapshot);
    }

    @Test
    void stepEventsBecomeObservations() {
        EngineMetrics metrics = metrics(Fixtures.options(true));
        FinishedRequest done =
                new FinishedRequest("alpha", FinishReason.LENGTH, 300, 40, 40, 2, 3.0, 0.4, 0.6, 2.0, 2.6, 0.05);
        publish(
                metrics,
                new Fixtures.Snap()
                        .sequence(1)
                        .adapter(Fixtures.adapter("alpha", 1, 0, Level.GPU))
                        .step(Fixtures.step(
                                100,
                                1,
                                List.of(new StepStats.FirstToken("alpha", 0.07), new StepStats.FirstToken(null, 0.3)),
                                List.of(0.02, 0.03),
                                List.of(done),
                                List.of(
                                        new AdapterLoad("alpha", AdapterLoad.Source.DISK, 0.2),
                                        new AdapterLoad("alpha", AdapterLoad.Source.CPU, 0.004))))
                        .build());
        publish(metrics, new Fixtures.Snap().sequence(2).step(StepStats.EMPTY).build());
        Page page = Page.parse(metrics.scrape().text());

        assertThat(page.value("vllm:time_to_first_token_seconds_count")).isEqualTo(2);
        assertThat(page.value("vllm:time_to_first_token_seconds_sum")).isCloseTo(0.37, within(1e-9));
        assertThat(page.value("vllm:time_to_first_token_seconds_bucket", "le", "0.08"))
                .isEqualTo(1);
        assertThat(page.value("vllm:inter_token_latency_seconds_count")).isEqualTo(2);
        assertThat(page.value("vllm:e2e_request_latency_seconds_sum")).isEqualTo(3.0);
        assertThat(page.value("vllm:request_queue_time_seconds_sum")).isEqualTo(0.4);
        assertThat(page.value("vllm:request_prefill_time_seconds_sum")).isEqualTo(0.6);
        assertThat(page.value("vllm:request_decode_time_seconds_sum")).isEqualTo(2.0);
        assertThat(page.value("vllm:request_inference_time_seconds_sum")).isEqualTo(2.6);
        assertThat(page.value("vllm:request_time_per_output_token_seconds_sum")).isEqualTo(0.05);
        assertThat(page.value("vllm:request_prompt_tokens_sum")).isEqualTo(300);
        assertThat(page.value("vllm:request_prompt_tokens_bucket", "le", "200.0"))
                .isEqualTo(0);
        assertThat(page.value("vllm:request_prompt_tokens_bucket", "le", "500.0"))
                .isEqualTo(1);
        assertThat(page.value("vllm:request_generation_tokens_sum")).isEqualTo(40);
        assertThat(page.value("vllm:request_params_n_sum")).isEqualTo(2);
        assertThat(page.value("vllm:request_params_max_tokens_sum")).isEqualTo(40);
        assertThat(page.value("vllm:iteration_tokens_total_count")).isEqualTo(1);
        assertThat(page.value("vllm:iteration_tokens_total_sum")).isEqualTo(100);
        assertThat(page.value("vllm:iteration_lora_adapters_bucket", "le", "0.0"))
                .isEqualTo(0);
        assertThat(page.value("vllm:iteration_lora_adapters_bucket", "le", "1.0"))
                .isEqualTo(1);
        assertThat(page.value("vllm:lora_adapter_load_seconds_count", "source", "disk"))
                .isEqualTo(1);
        assertThat(page.value("vllm:lora_adapter_load_seconds_sum", "source", "cpu"))
                .isEqualTo(0.004);
    }

    @Test
    void intervalsARequestNeverReachedAreNotObserved() {
        EngineMetrics metrics = metrics(Fixtures.options(false));
        FinishedRequest aborted = new FinishedRequest(
                null,
                FinishReason.ABORT,
                10,
                0,
                16,
                1,
                0.5,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN,
                Double.NaN);
        publish(
                metrics,
                new Fixtures.Snap()
                        .lora(false)
                        .step(Fixtures.step(0, -1, List.of(), List.of(), List.of(aborted), List.of()))
                        .build());
        Page page = Page.parse(metrics.scrape().text());
        assertThat(page.value("vllm:e2e_request_latency_seconds_count")).isEqualTo(1);
        assertThat(page.value("vllm:request_queue_time_seconds_count")).isEqualTo(0);
        assertThat(page.value("vllm:request_decode_time_seconds_count")).isEqualTo(0);
        assertThat(page.value("vllm:request_time_per_output_token_seconds_count"))
                .isEqualTo(0);
        assertThat(page.types()).doesNotContainKey("vllm:iteration_lora_adapters");
    }

    @Test
    void perAdapterLatencySeriesFollowTheListedAdapters() {
        EngineMetrics metrics = metrics(Fixtures.options(true).withEnableLoraLatencyMetrics(true));
        publish(
                metrics,
                new Fixtures.Snap()
                        .sequence(1)
                        .adapter(Fixtures.adapter("alpha", 1, 0, Level.GPU))
                        .adapter(Fixtures.adapter("beta", 1, 0, Level.GPU))
                        .step(Fixtures.step(
                                10,
                                2,
                                List.of(
                                        new StepStats.FirstToken("alpha", 0.1),
                                        new StepStats.FirstToken("beta", 0.2),
                                        new StepStats.FirstToken("ghost", 0.2)),
                                List.of(),
                                List.of(Fixtures.finished("beta", 2.0)),
                                List.of()))
                        .build());
        Page page = Page.parse(metrics.scrape().text());
        assertThat(page.labelValues("vllm:lora_time_to_first_token_seconds_count", "lora_name"))
                .containsExactly("alpha", "beta");
        assertThat(page.value("vllm:lora_e2e_request_latency_seconds_sum", "lora_name", "beta"))
                .isEqualTo(2.0);

        // beta evicted and idle: its latency series go with it
        publish(
                metrics,
                new Fixtures.Snap()
                        .sequence(2)
                        .adapter(Fixtures.adapter("alpha", 0, 0, Level.GPU))
                        .build());
        page = Page.parse(metrics.scrape().text());
        assertThat(page.labelValues("vllm:lora_time_to_first_token_seconds_count", "lora_name"))
                .containsExactly("alpha");
        assertThat(page.samples("vllm:lora_e2e_request_latency_seconds_count")).isEmpty();
    }

    @Test
    void perAdapterLatencyBeyondTheCapGoesToOther() {
        EngineMetrics metrics = metrics(
                Fixtures.options(true).withEnableLoraLatencyMetrics(true).withMaxLoraMetricSeries(1));
        publish(
                metrics,
                new Fixtures.Snap()
                        .sequence(1)
                        .adapter(Fixtures.adapter("alpha", 1, 0, Level.GPU))
                        .adapter(Fixtures.adapter("beta", 0, 1, Level.NONE))
                        .step(Fixtures.step(
                                10,
                                1,
                                List.of(new StepStats.FirstToken("alpha", 0.1), new StepStats.FirstToken("beta", 0.2)),
                                List.of(),
                                List.of(),
                                List.of()))
                        .build());
        Page page = Page.parse(metrics.scrape().text());
        assertThat(page.value("vllm:lora_time_to_first_token_seconds_sum", "lora_name", "alpha"))
                .isEqualTo(0.1);
        assertThat(page.value("vllm:lora_time_to_first_token_seconds_sum", "lora_name", "__other__"))
                .isEqualTo(0.2);
    }
}
