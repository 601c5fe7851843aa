package dev.patchbay.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.FinishCounts;
import dev.patchbay.engine.stats.FinishedRequest;
import dev.patchbay.testkit.Await;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The contract's invariants at every scrape of a random workload, with the engine thread publishing snapshots
 * while other threads scrape.
 */
class InvariantsTest {

    private static final int SLOTS = 3, HOST = 6, ADAPTERS = 12;

    /** A toy scheduler with adapter slots, a host cache, queues and finishing requests. */
    private static final class Scheduler {
        final Random random = new Random(7);
        final Map<String, int[]> queues = new LinkedHashMap<>(); // name -> {running, waiting}
        final Map<String, Level> levels = new LinkedHashMap<>();
        final Map<String, FinishCounts> finished = new LinkedHashMap<>();
        final List<String> lru = new ArrayList<>();
        int baseRunning, baseWaiting;
        long sequence;

        Scheduler() {
            for (int i = 0; i < ADAPTERS; i++) {
                String name = "adapter-" + i;
                queues.put(name, new int[2]);
                levels.put(name, Level.NONE);
                finished.put(name, FinishCounts.ZERO);
            }
        }

        EngineSnapshot step(boolean arrivals) {
            sequence++;
            List<FinishedRequest> done = new ArrayList<>();
            if (arrivals) {
                for (int k = random.nextInt(4); k > 0; k--) queues.get("adapter-" + random.nextInt(ADAPTERS))[1]++;
                baseWaiting += random.nextInt(2);
            }
            // finish some running requests
            for (Map.Entry<String, int[]> e : queues.entrySet()) {
                int[] q = e.getValue();
                for (int n = q[0] == 0 ? 0 : random.nextInt(q[0] + 1); n > 0; n--) {
                    q[0]--;
                    finished.put(e.getKey(), finished.get(e.getKey()).plus(FinishReason.STOP));
                    done.add(Fixtures.finished(e.getKey(), 1.0));
                }
            }
            if (baseRunning > 0 && random.nextBoolean()) baseRunning--;
            baseRunning += baseWaiting;
            baseWaiting = 0;
            // slots: adapters still running keep theirs; free slots go to waiting adapters
            List<String> active = new ArrayList<>();
            queues.forEach((name, q) -> {
                if (q[0] > 0) active.add(name);
            });
            for (Map.Entry<String, int[]> e : queues.entrySet()) {
                if (active.size() >= SLOTS) break;
                if (e.getValue()[1] > 0 && !active.contains(e.getKey())) active.add(e.getKey());
            }
            for (String name : active) {
                int[] q = queues.get(name);
                q[0] += q[1];
                q[1] = 0;
                lru.remove(name);
                lru.add(name);
            }
            while (lru.size() > HOST) lru.removeFirst();
            for (String name : levels.keySet()) {
                levels.put(name, active.contains(name) ? Level.GPU : lru.contains(name) ? Level.CPU : Level.NONE);
            }
            List<AdapterState> listed = new ArrayList<>();
            int running = baseRunning, waiting = 0;
            for (Map.Entry<String, int[]> e : queues.entrySet()) {
                int[] q = e.getValue();
                running += q[0];
                waiting += q[1];
                Level level = levels.get(e.getKey());
                if (level == Level.NONE && q[0] == 0 && q[1] == 0) continue;
                listed.add(Fixtures.adapter(
                        e.getKey(),
                        q[0],
                        q[1],
                        level,
                        false,
                        8,
                        level == Level.NONE ? 0 : 4096,
                        0,
                        0,
                        finished.get(e.getKey())));
            }
            return new Fixtures.Snap()
                    .sequence(sequence)
                    .running(running)
                    .waiting(waiting)
                    // every waiting request here waits for its adapter's slot
                    .deferred(waiting)
                    .counters(Fixtures.counters(sequence))
                    .adapters(listed)
                    .step(Fixtures.step(running, active.size(), List.of(), List.of(), done, List.of()))
                    .build();
        }
    }

    private static void checkPage(Page page, Map<Long, EngineSnapshot> published) {
        long sequence = (long) page.value("vllm:num_preemptions_total");
        EngineSnapshot s = published.get(sequence);
        assertThat(s).as("snapshot %d", sequence).isNotNull();
        double runningSum = 0, waitingSum = 0;
        for (AdapterState a : s.lora().adapters()) {
            double running = page.value("vllm:num_lora_requests_running", "lora_name", a.name());
            double waiting = page.value("vllm:num_lora_requests_waiting", "lora_name", a.name());
            assertThat(running).as("running of %s at %d", a.name(), sequence).isEqualTo(a.running());
            assertThat(waiting).as("waiting of %s at %d", a.name(), sequence).isEqualTo(a.waiting());
            runningSum += running;
            waitingSum += waiting;
            if (running > 0) {
                assertThat(page.value("vllm:lora_adapter_loaded", "lora_name", a.name(), "level", "gpu"))
                        .isEqualTo(1);
            }
        }
        assertThat(page.labelValues("vllm:num_lora_requests_running", "lora_name"))
                .hasSize(s.lora().adapters().size());
        assertThat(runningSum).isLessThanOrEqualTo(page.value("vllm:num_requests_running"));
        assertThat(waitingSum).isLessThanOrEqualTo(page.value("vllm:num_requests_waiting"));
        double capacity = page.value("vllm:num_requests_waiting_by_reason", "reason", "capacity");
        double deferred = page.value("vllm:num_requests_waiting_by_reason", "reason", "deferred");
        assertThat(deferred).as("deferred at %d", sequence).isEqualTo(s.numWaitingDeferred());
        assertThat(capacity + deferred)
                .as("by reason at %d", sequence)
                .isEqualTo(page.value("vllm:num_requests_waiting"));
        assertThat(page.value("vllm:num_gpu_loaded_lora_adapters"))
                .isLessThanOrEqualTo(page.value("vllm:max_gpu_lora_adapters"));
        String runningNames = page.samples("vllm:lora_requests_info").getFirst().label("running_lora_adapters");
        assertThat(runningNames).isEqualTo(String.join(",", s.lora().runningAdapters()));
    }

    @Test
    void invariantsHoldAtEveryScrapeWhileTheEngineRuns() throws Exception {
        Scheduler scheduler = new Scheduler();
        Map<Long, EngineSnapshot> published = new ConcurrentHashMap<>();
        AtomicReference<EngineSnapshot> latest = new AtomicReference<>(scheduler.step(false));
        published.put(latest.get().sequence(), latest.get());
        EngineMetrics metrics = new EngineMetrics(Fixtures.options(true), latest::get);
        AtomicBoolean done = new AtomicBoolean();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        AtomicInteger scrapes = new AtomicInteger();
        List<Thread> scrapers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            String accept = t == 0 ? null : "application/openmetrics-text; version=1.0.0";
            Thread scraper = new Thread(() -> {
                try {
                    while (!done.get()) {
                        checkPage(Page.parse(metrics.scrape(Set.of(), accept).text()), published);
                        scrapes.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            scraper.start();
            scrapers.add(scraper);
        }
        Thread engine = new Thread(() -> {
            for (int step = 0; step < 1500; step++) {
                EngineSnapshot s = scheduler.step(step < 1000);
                published.put(s.sequence(), s);
                latest.set(s);
                metrics.accept(s);
                LockSupport.parkNanos(20_000);
            }
        });
        engine.start();
        engine.join();
        // keep scraping the drained engine until each scraper has seen it
        int seen = scrapes.get();
        Await.until("four more scrapes", () -> scrapes.get() >= seen + 4 || !failures.isEmpty());
        done.set(true);
        for (Thread t : scrapers) t.join();
        assertThat(failures).isEmpty();
        assertThat(scrapes.get()).isGreaterThan(4);

        Page drained = Page.parse(metrics.scrape().text());
        checkPage(drained, published);
        assertThat(drained.samples("vllm:num_lora_requests_running")).allMatch(x -> x.value() == 0);
        assertThat(drained.samples("vllm:num_lora_requests_waiting")).allMatch(x -> x.value() == 0);
        assertThat(drained.value("vllm:num_requests_waiting")).isZero();
        assertThat(drained.samples("vllm:lora_requests_info").getFirst().labels())
                .containsEntry("running_lora_adapters", "")
                .containsEntry("waiting_lora_adapters", "");
    }
}
