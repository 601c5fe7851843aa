package dev.patchbay.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.FinishCounts;
import dev.patchbay.engine.stats.FinishedRequest;
import dev.patchbay.engine.stats.StepStats;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The cached text path writes exactly the bytes client_java's text writer writes for the same registry. */
class CachedTextPathTest {

    private static final String[] ODD_NAMES = {
        "__other_",
        "_a",
        "Zeta",
        "a\"quote",
        "back\\slash",
        "new\nline",
        "ünïcode-λ",
        "a,b",
        "x y",
        "__other__0",
        "A",
        "z"
    };

    /** A random workload over a pool of adapters: they come and go, change tiers, run, wait and finish. */
    private static final class Workload {
        final Random random;
        final List<String> pool = new ArrayList<>();
        final Map<String, AdapterState> live = new LinkedHashMap<>();
        long sequence;

        Workload(long seed, int poolSize) {
            random = new Random(seed);
            for (int i = 0; i < poolSize; i++) pool.add(String.format("adapter-%04d", i));
            pool.addAll(List.of(ODD_NAMES));
        }

        EngineSnapshot next(boolean lora) {
            sequence++;
            int changes = 1 + random.nextInt(Math.max(1, pool.size() / 5));
            for (int i = 0; i < changes; i++) {
                String name = pool.get(random.nextInt(pool.size()));
                if (live.containsKey(name) && random.nextInt(4) == 0) {
                    live.remove(name);
                    continue;
                }
                AdapterState old = live.get(name);
                Level level = Level.values()[random.nextInt(3)];
                int running = level == Level.GPU ? random.nextInt(4) : 0;
                int waiting = random.nextInt(3);
                long prompt = (old == null ? 0 : old.promptTokens()) + random.nextInt(500);
                long generation = (old == null ? 0 : old.generationTokens()) + random.nextInt(100);
                FinishCounts finished = old == null ? FinishCounts.ZERO : old.finished();
                if (random.nextBoolean()) finished = finished.plus(FinishReason.values()[random.nextInt(4)]);
                live.put(
                        name,
                        Fixtures.adapter(
                                name,
                                running,
                                waiting,
                                level,
                                random.nextBoolean(),
                                random.nextBoolean() ? 8 : 16,
                                level == Level.NONE ? 0 : 1000L + random.nextInt(1 << 20),
                                prompt,
                                generation,
                                finished));
            }
            List<String> names = new ArrayList<>(live.keySet());
            List<StepStats.FirstToken> first = new ArrayList<>();
            List<FinishedRequest> done = new ArrayList<>();
            List<AdapterLoad> loads = new ArrayList<>();
            for (int i = 0; i < 3 && !names.isEmpty(); i++) {
                String name = names.get(random.nextInt(names.size()));
                first.add(new StepStats.FirstToken(name, random.nextDouble()));
                done.add(Fixtures.finished(name, 0.5 + 10 * random.nextDouble()));
                loads.add(new AdapterLoad(name, AdapterLoad.Source.values()[random.nextInt(2)], random.nextDouble()));
            }
            int running = live.values().stream().mapToInt(AdapterState::running).sum() + random.nextInt(5);
            return new Fixtures.Snap()
                    .sequence(sequence)
                    .lora(lora)
                    .running(running)
                    .waiting(random.nextInt(50))
                    .counters(Fixtures.counters(sequence))
                    .adapters(new ArrayList<>(live.values()))
                    .step(Fixtures.step(
                            random.nextInt(9000),
                            random.nextInt(9),
                            first,
                            List.of(random.nextDouble() / 10),
                            done,
                            loads))
                    .build();
        }
    }

    private static void assertSameBytes(EngineMetrics metrics, Set<String> names) {
        String library = metrics.scrapeWithLibrary(names, null).text();
        String cached = metrics.scrape(names, null).text();
        assertThat(cached).isEqualTo(library);
        assertThat(metrics.textFallbacks())
                .as("pages the cached path did not write")
                .isZero();
    }

    private static void run(MetricsOptions options, long seed, int poolSize, int steps, boolean lora) {
        Workload workload = new Workload(seed, poolSize);
        AtomicReference<EngineSnapshot> latest = new AtomicReference<>(workload.next(lora));
        EngineMetrics metrics = new EngineMetrics(options, latest::get);
        List<String> families = new ArrayList<>(
                Page.parse(metrics.scrapeWithLibrary(Set.of(), null).text())
                        .types()
                        .keySet());
        for (int step = 0; step < steps; step++) {
            EngineSnapshot next = workload.next(lora);
            latest.set(next);
            metrics.accept(next);
            assertSameBytes(metrics, Set.of());
            if (step % 5 == 0) {
                Set<String> subset = new HashSet<>();
                for (String f : families) if (workload.random.nextInt(3) == 0) subset.add(f);
                subset.add("vllm:num_lora_requests_running");
                assertSameBytes(metrics, subset);
            }
        }
    }

    @Test
    void sameBytesAsTheLibraryOverARandomWorkload() {
        run(Fixtures.options(true), 1, 40, 200, true);
    }

    @Test
    void sameBytesWithTheSeriesCapAndOther() {
        run(Fixtures.options(true).withMaxLoraMetricSeries(7), 2, 40, 200, true);
    }

    @Test
    void sameBytesWithLatencyMetricsAndAnotherModel() {
        MetricsOptions options =
                Fixtures.options(true).withEnableLoraLatencyMetrics(true).withEngine("1");
        run(
                new MetricsOptions(
                        "tenant \"x\"\\model",
                        options.engine(),
                        options.patchbayVersion(),
                        null,
                        5,
                        true,
                        options.maxModelLen(),
                        true),
                3,
                15,
                150,
                true);
    }

    @Test
    void sameBytesWithoutLora() {
        run(Fixtures.options(false), 4, 5, 20, false);
    }

    @Test
    void sameBytesWithManyAdapters() {
        run(Fixtures.options(true), 5, 1500, 10, true);
    }

    @Test
    void sameBytesWithForeignCollectors() {
        AtomicReference<EngineSnapshot> latest = new AtomicReference<>(new Workload(6, 20).next(true));
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), latest::get);
        // a family without help, one sorting first, one between the per-adapter families, one empty
        metrics.registry()
                .register(() -> CounterSnapshot.builder()
                        .name("aaa_requests")
                        .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                                .value(1)
                                .build())
                        .build());
        metrics.registry()
                .register(() -> GaugeSnapshot.builder()
                        .name("vllm:lora_adapter_m")
                        .help("x\nwith # hash")
                        .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                                .labels(Labels.of("a", "#\n"))
                                .value(2)
                                .build())
                        .build());
        metrics.registry()
                .register(() -> GaugeSnapshot.builder()
                        .name("vllm:lora_adapter_n")
                        .help("empty")
                        .build());
        assertSameBytes(metrics, Set.of());
        assertThat(metrics.scrape().text()).contains("aaa_requests_total 1.0").contains("vllm:lora_adapter_m{");
    }

    /** What a router asks for with {@code name[]}: three of the seven per-adapter families. */
    private static final Set<String> ROUTER_FAMILIES = Set.of(
            "vllm:num_requests_running",
            "vllm:num_requests_waiting",
            "vllm:num_requests_waiting_by_reason",
            "vllm:num_tokens_waiting",
            "vllm:kv_cache_usage_perc",
            "vllm:lora_requests_info",
            "vllm:lora_adapter_loaded",
            "vllm:num_lora_requests_running",
            "vllm:num_lora_requests_waiting");

    /**
     * Families are rendered and joined when a scrape first asks for them: a row and a chunk first written for the
     * router's families, and reused later by a full page, must give the other families' bytes too.
     */
    @Test
    void sameBytesWhenScrapesAskForFewFamiliesFirst() {
        Workload workload = new Workload(7, 60);
        AtomicReference<EngineSnapshot> latest = new AtomicReference<>(workload.next(true));
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), latest::get);
        for (int step = 0; step < 120; step++) {
            EngineSnapshot next = workload.next(true);
            latest.set(next);
            metrics.accept(next);
            assertSameBytes(metrics, ROUTER_FAMILIES);
            assertSameBytes(metrics, Set.of("vllm:lora_requests"));
            if (step % 4 == 3) assertSameBytes(metrics, Set.of());
        }
    }

    /** Scrapes of different families at once share rows and chunks; each still gets the library's bytes. */
    @Test
    void concurrentScrapesOfDifferentFamiliesGetTheLibrarysBytes() throws Exception {
        Workload workload = new Workload(8, 80);
        AtomicReference<EngineSnapshot> latest = new AtomicReference<>(workload.next(true));
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), latest::get);
        List<Set<String>> asks = List.of(
                ROUTER_FAMILIES,
                Set.of(),
                Set.of("vllm:lora_requests", "vllm:lora_adapter_memory_bytes"),
                Set.of("vllm:lora_prompt_tokens", "vllm:lora_adapter_loaded"));
        try (var threads = Executors.newFixedThreadPool(asks.size())) {
            for (int step = 0; step < 60; step++) {
                EngineSnapshot next = workload.next(true);
                latest.set(next);
                metrics.accept(next);
                var start = new CyclicBarrier(asks.size());
                List<Future<String>> pages = new ArrayList<>();
                for (Set<String> names : asks) {
                    pages.add(threads.submit(() -> {
                        start.await();
                        return metrics.scrape(names, null).text();
                    }));
                }
                for (int i = 0; i < asks.size(); i++) {
                    assertThat(pages.get(i).get())
                            .as("step %d, families %s", step, asks.get(i))
                            .isEqualTo(
                                    metrics.scrapeWithLibrary(asks.get(i), null).text());
                }
            }
        }
        assertThat(metrics.textFallbacks()).isZero();
    }

    @Test
    void familySegmentsSplitAtTheCommentsOfEachFamily() {
        byte[] page = "# TYPE a counter\na_total 1.0\n# HELP b x\n# TYPE b gauge\nb 2.0\nb{l=\"#\"} 3.0\n"
                .getBytes(StandardCharsets.UTF_8);
        List<int[]> segments = TextPageWriter.familySegments(page);
        assertThat(segments).hasSize(2);
        assertThat(new String(
                        page, segments.get(1)[0], segments.get(1)[1] - segments.get(1)[0], StandardCharsets.UTF_8))
                .startsWith("# HELP b")
                .endsWith("3.0\n");
    }

    @Test
    void aChangedAdapterIsRenderedAgain() {
        AtomicReference<EngineSnapshot> latest = new AtomicReference<>(new Fixtures.Snap()
                .adapter(Fixtures.adapter("alpha", 1, 0, Level.GPU))
                .build());
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), latest::get);
        assertThat(Page.parse(metrics.scrape().text()).value("vllm:num_lora_requests_running"))
                .isEqualTo(1);
        latest.set(new Fixtures.Snap()
                .adapter(Fixtures.adapter("alpha", 3, 0, Level.GPU))
                .build());
        assertThat(Page.parse(metrics.scrape().text()).value("vllm:num_lora_requests_running"))
                .isEqualTo(3);
    }
}
