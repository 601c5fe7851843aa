package dev.patchbay.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import io.prometheus.metrics.expositionformats.generated.com_google_protobuf_4_36_2.Metrics.MetricFamily;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** name[] filtering, content negotiation, and one snapshot per scrape. */
class ScrapeTest {

    private static final String OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    private static final String PROTOBUF =
            "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";

    private final EngineSnapshot snapshot = new Fixtures.Snap()
            .running(2)
            .waiting(1)
            .adapter(Fixtures.adapter("alpha", 2, 1, Level.GPU))
            .build();

    @Test
    void nameFilterReturnsOnlyTheAskedFamilies() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> snapshot);
        Page page = Page.parse(metrics.scrape(
                        Set.of(
                                "vllm:num_requests_running",
                                "vllm:num_lora_requests_running",
                                "vllm:lora_requests_info"),
                        null)
                .text());
        assertThat(page.types().keySet())
                .containsExactlyInAnyOrder(
                        "vllm:num_requests_running", "vllm:num_lora_requests_running", "vllm:lora_requests_info");
    }

    @Test
    void exposedNamesSelectTheirFamily() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> snapshot);
        Page page = Page.parse(metrics.scrape(
                        Set.of(
                                "vllm:prompt_tokens_total",
                                "vllm:lora_requests_total",
                                "vllm:e2e_request_latency_seconds_bucket"),
                        null)
                .text());
        assertThat(page.types().keySet())
                .containsExactlyInAnyOrder(
                        "vllm:prompt_tokens_total", "vllm:lora_requests_total", "vllm:e2e_request_latency_seconds");
    }

    @Test
    void unknownNamesGiveAnEmptyPage() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> snapshot);
        assertThat(metrics.scrape(Set.of("nope"), null).body()).isEmpty();
    }

    @Test
    void textIsTheDefault() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> snapshot);
        for (String accept : new String[] {null, "", "text/plain", "*/*", "text/html"}) {
            Scrape scrape = metrics.scrape(Set.of(), accept);
            assertThat(scrape.contentType()).as(accept).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
            assertThat(scrape.text())
                    .contains("# TYPE vllm:num_requests_running gauge")
                    .doesNotContain("# EOF");
        }
    }

    @Test
    void openMetricsOnRequest() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> snapshot);
        Scrape scrape = metrics.scrape(Set.of(), "application/openmetrics-text;version=1.0.0,text/plain;q=0.5");
        assertThat(scrape.contentType()).startsWith("application/openmetrics-text");
        assertThat(scrape.text())
                .endsWith("# EOF\n")
                .contains("# TYPE vllm:num_preemptions counter")
                .contains("vllm:num_preemptions_total{engine=\"0\"")
                .contains("vllm:num_lora_requests_running{engine=\"0\",lora_name=\"alpha\"");
        assertThat(metrics.scrape(Set.of("vllm:num_requests_waiting"), OPENMETRICS)
                        .text())
                .contains("vllm:num_requests_waiting{")
                .doesNotContain("vllm:num_requests_running");
    }

    @Test
    void protobufOnRequest() throws IOException {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> snapshot);
        Scrape scrape = metrics.scrape(Set.of(), PROTOBUF);
        assertThat(scrape.contentType()).isEqualTo(PROTOBUF);
        List<MetricFamily> families = new ArrayList<>();
        ByteArrayInputStream in = new ByteArrayInputStream(scrape.body());
        for (MetricFamily f; (f = MetricFamily.parseDelimitedFrom(in)) != null; ) families.add(f);
        assertThat(families)
                .extracting(MetricFamily::getName)
                .contains(
                        "vllm:num_requests_running",
                        "vllm:num_lora_requests_running",
                        "vllm:prompt_tokens_total",
                        "vllm:time_to_first_token_seconds");
        MetricFamily running = families.stream()
                .filter(f -> f.getName().equals("vllm:num_lora_requests_running"))
                .findFirst()
                .orElseThrow();
        assertThat(running.getMetric(0).getGauge().getValue()).isEqualTo(2);
    }

    @Test
    void aScrapeReadsTheSnapshotOnce() {
        AtomicInteger reads = new AtomicInteger();
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> {
            reads.incrementAndGet();
            return snapshot;
        });
        metrics.scrape(Set.of(), null);
        assertThat(reads).hasValue(1);
        metrics.scrape(Set.of(), OPENMETRICS);
        assertThat(reads).hasValue(2);
        metrics.scrape(Set.of("vllm:e2e_request_latency_seconds"), null);
        assertThat(reads).as("histograms only: no snapshot needed").hasValue(2);
    }

    @Test
    void everyNumberOfAScrapeComesFromTheSameSnapshot() {
        // each read returns a newer snapshot whose numbers all equal its sequence
        AtomicInteger sequence = new AtomicInteger();
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> {
            int n = sequence.incrementAndGet();
            return new Fixtures.Snap()
                    .sequence(n)
                    .running(n)
                    .waiting(n)
                    .counters(Fixtures.counters(n))
                    .adapter(Fixtures.adapter("alpha", n, 0, Level.GPU))
                    .build();
        });
        for (String accept : new String[] {null, OPENMETRICS}) {
            Page page = Page.parse(metrics.scrape(Set.of(), accept).text().replace("# EOF\n", ""));
            double n = page.value("vllm:num_requests_running");
            assertThat(page.value("vllm:num_requests_waiting")).isEqualTo(n);
            assertThat(page.value("vllm:num_preemptions_total")).isEqualTo(n);
            assertThat(page.value("vllm:num_lora_requests_running", "lora_name", "alpha"))
                    .isEqualTo(n);
        }
    }

    @Test
    void streamingWritesTheSamePage() throws IOException {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> snapshot);
        for (String accept : new String[] {null, OPENMETRICS}) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            String contentType = metrics.writeTo(Set.of(), accept, out);
            Scrape scrape = metrics.scrape(Set.of(), accept);
            assertThat(contentType).isEqualTo(scrape.contentType());
            assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(scrape.text());
            ByteArrayOutputStream copy = new ByteArrayOutputStream();
            Scrape fresh = metrics.scrape(Set.of(), accept);
            fresh.writeTo(copy);
            assertThat(copy.toByteArray()).isEqualTo(scrape.body()).hasSize(fresh.size());
        }
    }

    @Test
    void collectorsTheServerRegistersAreScrapedToo() {
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), () -> snapshot);
        metrics.registry()
                .register(() -> new MetricSnapshots(CounterSnapshot.builder()
                                .name("http_requests")
                                .help("HTTP requests.")
                                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                                        .value(7)
                                        .build())
                                .build())
                        .get(0));
        assertThat(metrics.scrape().text()).contains("http_requests_total 7.0");
        assertThat(metrics.scrape(Set.of("http_requests_total"), null).text())
                .startsWith("# HELP http_requests_total")
                .doesNotContain("vllm:");
    }
}
