package dev.patchbay.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.FinishCounts;
import dev.patchbay.engine.stats.LoraState;
import dev.patchbay.engine.stats.StepStats;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Per-adapter series: the cap and {@code __other__}, no stale series, the legacy gauge's fixes. */
class LoraSeriesTest {

    private final AtomicReference<EngineSnapshot> latest = new AtomicReference<>();

    private Page publishAndScrape(EngineMetrics metrics, EngineSnapshot snapshot) {
        latest.set(snapshot);
        metrics.accept(snapshot);
        return Page.parse(metrics.scrape().text());
    }

    private static final List<String> PER_ADAPTER = List.of(
            "vllm:num_lora_requests_running",
            "vllm:num_lora_requests_waiting",
            "vllm:lora_requests_total",
            "vllm:lora_prompt_tokens_total",
            "vllm:lora_generation_tokens_total");

    @Test
    void adaptersBeyondTheCapAreSummedIntoOther() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true).withMaxLoraMetricSeries(3), latest::get);
        EngineSnapshot s = new Fixtures.Snap()
                .running(5)
                .waiting(9)
                .adapter(Fixtures.adapter("a-gpu", 2, 0, Level.GPU, false, 8, 100, 10, 1, new FinishCounts(1, 0, 0, 0)))
                .adapter(Fixtures.adapter("b-gpu", 3, 0, Level.GPU, false, 8, 100, 20, 2, new FinishCounts(2, 0, 0, 0)))
                .adapter(Fixtures.adapter("c-cpu", 0, 0, Level.CPU, true, 16, 200, 30, 3, new FinishCounts(0, 1, 0, 0)))
                .adapter(Fixtures.adapter("d-cpu", 0, 4, Level.CPU, false, 8, 300, 40, 4, new FinishCounts(0, 0, 1, 0)))
                .adapter(Fixtures.adapter("e-none", 0, 5, Level.NONE, false, 8, 0, 50, 5, new FinishCounts(0, 0, 0, 1)))
                .build();
        Page page = publishAndScrape(metrics, s);

        // gpu first, then cpu, then the rest, each by name: a-gpu, b-gpu, c-cpu keep their series
        assertThat(page.labelValues("vllm:num_lora_requests_running", "lora_name"))
                .containsExactly("__other__", "a-gpu", "b-gpu", "c-cpu");
        for (String family : PER_ADAPTER) {
            assertThat(page.labelValues(family, "lora_name"))
                    .as(family)
                    .containsExactlyInAnyOrder("__other__", "a-gpu", "b-gpu", "c-cpu");
        }
        assertThat(page.value("vllm:num_lora_requests_waiting", "lora_name", "__other__"))
                .isEqualTo(9);
        assertThat(page.value("vllm:lora_prompt_tokens_total", "lora_name", "__other__"))
                .isEqualTo(90);
        assertThat(page.value("vllm:lora_requests_total", "lora_name", "__other__", "finished_reason", "abort"))
                .isEqualTo(1);
        assertThat(page.value("vllm:lora_requests_total", "lora_name", "__other__", "finished_reason", "error"))
                .isEqualTo(1);
        assertThat(page.value("vllm:lora_adapter_memory_bytes", "lora_name", "__other__"))
                .isEqualTo(300);
        assertThat(page.find("vllm:lora_adapter_loaded", "lora_name", "__other__"))
                .isEmpty();
        assertThat(page.value("vllm:lora_metric_series_overflow_adapters")).isEqualTo(2);
        assertThat(page.value("vllm:lora_metric_series_overflow_total")).isEqualTo(2);
        // the sums over adapters still match the engine's totals
        assertThat(page.samples("vllm:num_lora_requests_running").stream()
                        .mapToDouble(Page.Sample::value)
                        .sum())
                .isEqualTo(5);

        // the same fold again is not counted again; a newly folded adapter is
        page = publishAndScrape(metrics, s);
        assertThat(page.value("vllm:lora_metric_series_overflow_total")).isEqualTo(2);
        List<AdapterState> more = new ArrayList<>(s.lora().adapters());
        more.add(Fixtures.adapter("f-none", 0, 1, Level.NONE));
        page = publishAndScrape(metrics, new Fixtures.Snap().adapters(more).build());
        assertThat(page.value("vllm:lora_metric_series_overflow_total")).isEqualTo(3);
        assertThat(page.value("vllm:lora_metric_series_overflow_adapters")).isEqualTo(3);
    }

    @Test
    void withinTheCapThereIsNoOther() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true).withMaxLoraMetricSeries(2), latest::get);
        Page page = publishAndScrape(
                metrics,
                new Fixtures.Snap()
                        .adapter(Fixtures.adapter("a", 1, 0, Level.GPU))
                        .adapter(Fixtures.adapter("b", 0, 0, Level.CPU))
                        .build());
        assertThat(page.labelValues("vllm:num_lora_requests_running", "lora_name"))
                .containsExactly("a", "b");
        assertThat(page.value("vllm:lora_metric_series_overflow_adapters")).isZero();
    }

    @Test
    void anAdapterNamedLikeTheOverflowSeriesJoinsIt() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), latest::get);
        Page page = publishAndScrape(
                metrics,
                new Fixtures.Snap()
                        .adapter(Fixtures.adapter("__other__", 1, 0, Level.GPU))
                        .adapter(Fixtures.adapter("a", 1, 0, Level.GPU))
                        .build());
        assertThat(page.samples("vllm:num_lora_requests_running")).hasSize(2);
        assertThat(page.value("vllm:num_lora_requests_running", "lora_name", "__other__"))
                .isEqualTo(1);
    }

    @Test
    void twoEntriesWithOneNameShareOneSeries() {
        // an adapter unloaded and loaded again while requests of the old one are still running
        EngineSnapshot s = new Fixtures.Snap()
                .adapter(Fixtures.adapter("alpha", 2, 0, Level.GPU, false, 8, 100, 10, 1, new FinishCounts(1, 0, 0, 0)))
                .adapter(Fixtures.adapter("alpha", 0, 3, Level.NONE, false, 16, 0, 5, 0, new FinishCounts(0, 0, 1, 0)))
                .build();
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> s);
        for (Page page : List.of(
                Page.parse(metrics.scrape().text()),
                Page.parse(metrics.scrapeWithLibrary(Set.of(), null).text()))) {
            assertThat(page.value("vllm:num_lora_requests_running", "lora_name", "alpha"))
                    .isEqualTo(2);
            assertThat(page.value("vllm:num_lora_requests_waiting", "lora_name", "alpha"))
                    .isEqualTo(3);
            assertThat(page.value("vllm:lora_prompt_tokens_total", "lora_name", "alpha"))
                    .isEqualTo(15);
            assertThat(page.value("vllm:lora_requests_total", "lora_name", "alpha", "finished_reason", "abort"))
                    .isEqualTo(1);
            assertThat(page.value("vllm:lora_adapter_loaded", "lora_name", "alpha", "level", "gpu", "rank", "8"))
                    .isEqualTo(1);
            assertThat(page.value("vllm:lora_metric_series_overflow_adapters")).isZero();
        }
        EngineSnapshot listedTwice = new EngineSnapshot(
                2,
                0,
                0,
                Fixtures.MODEL,
                2,
                3,
                0,
                0,
                1000,
                0,
                16,
                false,
                new LoraState(
                        4,
                        8,
                        16,
                        "auto",
                        s.lora().adapters(),
                        1,
                        0,
                        List.of("alpha", "alpha"),
                        List.of("alpha", "beta", "beta"),
                        1.7e9),
                Fixtures.counters(2),
                StepStats.EMPTY);
        Page page = Page.parse(new EngineMetrics(Fixtures.options(true), () -> listedTwice)
                .scrape()
                .text());
        assertThat(page.samples("vllm:lora_requests_info").getFirst().labels())
                .containsEntry("running_lora_adapters", "alpha")
                .containsEntry("waiting_lora_adapters", "alpha,beta");
    }

    @Test
    void seriesOfAnAdapterThatIsGoneVanish() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), latest::get);
        Page page = publishAndScrape(
                metrics,
                new Fixtures.Snap()
                        .adapter(Fixtures.adapter("alpha", 1, 0, Level.GPU))
                        .adapter(Fixtures.adapter("beta", 1, 2, Level.GPU))
                        .build());
        assertThat(page.labelValues("vllm:lora_adapter_loaded", "lora_name"))
                .containsExactlyInAnyOrder("alpha", "beta");

        // beta drained and was evicted
        page = publishAndScrape(
                metrics,
                new Fixtures.Snap()
                        .adapter(Fixtures.adapter("alpha", 1, 0, Level.GPU))
                        .build());
        for (String family : PER_ADAPTER) {
            assertThat(page.labelValues(family, "lora_name")).as(family).containsExactly("alpha");
        }
        assertThat(page.labelValues("vllm:lora_adapter_loaded", "lora_name")).containsExactly("alpha");
        assertThat(page.labelValues("vllm:lora_adapter_memory_bytes", "lora_name"))
                .containsExactly("alpha");
    }

    @Test
    void anAdapterMovingBetweenTiersHasOneLoadedSeries() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), latest::get);
        publishAndScrape(
                metrics,
                new Fixtures.Snap()
                        .adapter(Fixtures.adapter("alpha", 1, 0, Level.GPU))
                        .build());
        Page page = publishAndScrape(
                metrics,
                new Fixtures.Snap()
                        .adapter(Fixtures.adapter("alpha", 0, 0, Level.CPU))
                        .build());
        assertThat(page.samples("vllm:lora_adapter_loaded"))
                .singleElement()
                .satisfies(x -> assertThat(x.label("level")).isEqualTo("cpu"));
    }

    @Test
    void legacyGaugeListsRunningAndWaitingSeparately() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), latest::get);
        Page page = publishAndScrape(
                metrics,
                new Fixtures.Snap()
                        .activityChanged(1739557572.25)
                        .adapter(Fixtures.adapter("alpha", 2, 0, Level.GPU))
                        .adapter(Fixtures.adapter("beta", 1, 3, Level.GPU))
                        .adapter(Fixtures.adapter("gamma", 0, 1, Level.NONE))
                        .build());
        Page.Sample legacy = page.samples("vllm:lora_requests_info").getFirst();
        assertThat(page.samples("vllm:lora_requests_info")).hasSize(1);
        assertThat(legacy.labels())
                .containsEntry("max_lora", "4")
                .containsEntry("running_lora_adapters", "alpha,beta")
                .containsEntry("waiting_lora_adapters", "beta,gamma");
        assertThat(legacy.value()).isEqualTo(1739557572.25);
    }

    @Test
    void legacyGaugeShowsOnlyTheCurrentLabelSet() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), latest::get);
        publishAndScrape(
                metrics,
                new Fixtures.Snap()
                        .adapter(Fixtures.adapter("alpha", 1, 0, Level.GPU))
                        .build());
        publishAndScrape(
                metrics,
                new Fixtures.Snap()
                        .adapter(Fixtures.adapter("beta", 0, 1, Level.GPU))
                        .build());
        Page page = publishAndScrape(
                metrics, new Fixtures.Snap().activityChanged(1.75e9).build());
        assertThat(page.samples("vllm:lora_requests_info")).singleElement().satisfies(x -> {
            assertThat(x.labels())
                    .containsEntry("running_lora_adapters", "")
                    .containsEntry("waiting_lora_adapters", "");
            assertThat(x.value()).isEqualTo(1.75e9);
        });
    }

    @Test
    void legacyGaugeExistsFromStartUp() {
        EngineSnapshot initial = new Fixtures.Snap().sequence(0).build();
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> initial);
        Page page = Page.parse(metrics.scrape().text());
        assertThat(page.samples("vllm:lora_requests_info"))
                .singleElement()
                .satisfies(x -> assertThat(x.labels())
                        .containsEntry("max_lora", "4")
                        .containsEntry("running_lora_adapters", "")
                        .containsEntry("waiting_lora_adapters", ""));
    }
}
