package dev.patchbay.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.Counters;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.FinishCounts;
import dev.patchbay.engine.stats.FinishedRequest;
import dev.patchbay.engine.stats.StepStats;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Pins the Prometheus text pages of rich fixture snapshots byte for byte, so reorganising how families are declared
 * or counted cannot change a name, label, type, bucket, help text or value. The expected pages are test resources;
 * on a mismatch the page written is left under {@code target/golden-actual} for comparison.
 */
class GoldenPageTest {

    /** Every counter a different number, so two counters swapped show in the page. */
    private static Counters distinctCounters() {
        return new Counters(
                11,
                1_013,
                517,
                new FinishCounts(19, 23, 29, 31),
                new Counters.PrefixCache(8_037, 4_041),
                new Counters.Lora(
                        new Counters.BySource(43, 47),
                        new Counters.ByTier(53, 59),
                        new Counters.ByTier(61, 71),
                        new Counters.ByTier(67, 73),
                        79));
    }

    /** Two steps with every kind of event; five adapters of which two fold into __other__ at a cap of three. */
    private static EngineMetrics richMetrics(MetricsOptions options) {
        StepStats first = Fixtures.step(
                96,
                3,
                List.of(
                        new StepStats.FirstToken("alpha", 0.042),
                        new StepStats.FirstToken(null, 0.31),
                        new StepStats.FirstToken("delta", 2.5)),
                List.of(0.011, 0.027, 0.3),
                List.of(
                        Fixtures.finished("alpha", 1.25),
                        Fixtures.finished(null, 7.5),
                        new FinishedRequest(
                                "gamma",
                                FinishReason.LENGTH,
                                300,
                                1,
                                1,
                                2,
                                0.2,
                                0.1,
                                Double.NaN,
                                Double.NaN,
                                Double.NaN,
                                Double.NaN)),
                List.of(
                        new AdapterLoad("alpha", AdapterLoad.Source.DISK, 0.35),
                        new AdapterLoad("beta", AdapterLoad.Source.CPU, 0.0004)));
        StepStats second = Fixtures.step(
                1,
                1,
                List.of(),
                List.of(0.004),
                List.of(Fixtures.finished("beta", 30)),
                List.of(new AdapterLoad("gamma", AdapterLoad.Source.DISK, 12)));
        Fixtures.Snap snap = new Fixtures.Snap()
                .running(5)
                .waiting(3)
                .counters(distinctCounters())
                .adapter(Fixtures.adapter(
                        "alpha", 2, 1, Level.GPU, true, 16, 4096, 120, 33, new FinishCounts(5, 1, 2, 0)))
                .adapter(Fixtures.adapter("beta", 1, 0, Level.GPU, false, 8, 2048, 64, 9, new FinishCounts(1, 0, 0, 1)))
                .adapter(Fixtures.adapter("gamma", 0, 2, Level.CPU))
                .adapter(Fixtures.adapter("delta", 0, 0, Level.NONE))
                .adapter(Fixtures.adapter("quote\"and\\slash", 2, 0, Level.GPU));
        EngineSnapshot s1 = snap.step(first).build();
        EngineSnapshot s2 = snap.sequence(2).step(second).build();
        EngineSnapshot[] latest = {s1};
        EngineMetrics metrics = new EngineMetrics(options, () -> latest[0]);
        metrics.accept(s1);
        latest[0] = s2;
        metrics.accept(s2);
        return metrics;
    }

    private static MetricsOptions loraOptions() {
        return Fixtures.options(true).withMaxLoraMetricSeries(3).withEnableLoraLatencyMetrics(true);
    }

    @Test
    void loraPageIsUnchanged() throws IOException {
        assertPage("lora.txt", richMetrics(loraOptions()).scrape().text());
    }

    @Test
    void loraPageThroughTheLibraryIsUnchanged() throws IOException {
        assertPage(
                "lora.txt",
                richMetrics(loraOptions()).scrapeWithLibrary(Set.of(), null).text());
    }

    @Test
    void pageWithTheDeprecatedFamilyHiddenIsUnchanged() throws IOException {
        assertPage(
                "lora-next-version.txt",
                richMetrics(loraOptions().withPatchbayVersion("0.2.0")).scrape().text());
    }

    @Test
    void filteredPageIsUnchanged() throws IOException {
        assertPage(
                "lora-filtered.txt",
                richMetrics(loraOptions())
                        .scrape(
                                Set.of(
                                        "vllm:lora_cache_hits_total",
                                        "vllm:num_requests_running",
                                        "vllm:lora_requests",
                                        "vllm:lora_adapter_load_seconds_bucket",
                                        "vllm:lora_requests_info"),
                                null)
                        .text());
    }

    @Test
    void pageWithoutLoraIsUnchanged() throws IOException {
        EngineSnapshot s = new Fixtures.Snap()
                .lora(false)
                .prefixCaching(false)
                .running(1)
                .counters(distinctCounters())
                .step(Fixtures.step(
                        7,
                        -1,
                        List.of(new StepStats.FirstToken(null, 0.09)),
                        List.of(0.02),
                        List.of(Fixtures.finished(null, 0.8)),
                        List.of()))
                .build();
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(false), () -> s);
        metrics.accept(s);
        assertPage("no-lora.txt", metrics.scrape().text());
    }

    /** The rich page shows exactly the declared families: nothing is rendered that the declarations do not list. */
    @Test
    void everyFamilyOnTheRichPageIsDeclared() {
        Set<String> declared = new TreeSet<>();
        for (EngineFamily f : EngineFamily.values()) {
            declared.add(f.type == MetricType.COUNTER ? f.metricName + "_total" : f.metricName);
        }
        for (AdapterFamily f : AdapterFamily.values()) declared.add(f.sampleName());
        for (HistogramFamily f : HistogramFamily.values()) declared.add(f.metricName);
        declared.add("vllm:lora_metric_series_overflow_total"); // an event counter of the step observer
        Set<String> shown = new TreeSet<>();
        for (String line : richMetrics(loraOptions()).scrape().text().split("\n")) {
            if (line.startsWith("# TYPE ")) shown.add(line.split(" ")[2]);
        }
        assertThat(shown).isEqualTo(declared);
    }

    private static void assertPage(String name, String actual) throws IOException {
        String expected;
        try (InputStream in = GoldenPageTest.class.getResourceAsStream("/golden/" + name)) {
            expected = in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!actual.equals(expected)) {
            Path out = Path.of("target", "golden-actual", name);
            Files.createDirectories(out.getParent());
            Files.writeString(out, actual, StandardCharsets.UTF_8);
        }
        assertThat(expected).as("resource golden/" + name).isNotNull();
        assertThat(actual)
                .as("page " + name + " (written to target/golden-actual)")
                .isEqualTo(expected);
    }
}
