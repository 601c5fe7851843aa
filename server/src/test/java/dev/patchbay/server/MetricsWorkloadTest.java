package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.testkit.Await;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A randomized concurrent workload (many adapters, fewer slots, streams cut short, loads and unloads during
 * traffic) while a scraper reads /metrics over HTTP and checks the metrics contract's invariants on every page.
 */
class MetricsWorkloadTest {
    @TempDir
    Path dir;

    @Test
    void everyScrapeObeysTheInvariantsAndGaugesDrainToZero() throws Exception {
        List<String> adapters = List.of("a0", "a1", "a2", "a3", "a4", "a5");
        for (String x : List.of("x0", "x1", "x2")) ServerHarness.writeAdapter(dir, x);
        try (ServerHarness h = new ServerHarness(
                dir,
                adapters,
                "--enable-lora",
                "--max-loras",
                "2",
                "--max-cpu-loras",
                "4",
                "--allow-runtime-lora-updating",
                "--max-num-seqs",
                "16",
                "--sim-latency-ms",
                "1,0.01,0.05,0.1,15,1")) {
            ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
            AtomicBoolean trafficDone = new AtomicBoolean();
            AtomicInteger scrapes = new AtomicInteger();
            AtomicInteger statusOk = new AtomicInteger();
            AtomicInteger statusOther = new AtomicInteger();
            ExecutorService pool = Executors.newCachedThreadPool();
            String[] lastPage = new String[1];

            Future<?> scraper = pool.submit(() -> {
                while (!trafficDone.get() && scrapes.get() < 2000) {
                    String page = h.get("/metrics").body();
                    lastPage[0] = page;
                    check(PromPage.parse(page), violations);
                    scrapes.incrementAndGet();
                }
                return null;
            });
            List<Future<?>> clients = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                long seed = t;
                clients.add(pool.submit(() -> {
                    SplittableRandom rnd = new SplittableRandom(seed);
                    for (int i = 0; i < 25; i++) {
                        String model = rnd.nextInt(5) == 0 ? "test-model" : "a" + rnd.nextInt(adapters.size() + 1);
                        int max = 1 + rnd.nextInt(60);
                        boolean stream = rnd.nextBoolean();
                        String body = "{\"model\":\"" + model + "\",\"prompt\":\"the water " + i + "\",\"max_tokens\":"
                                + max + ",\"ignore_eos\":true,\"stream\":" + stream + "}";
                        if (stream && rnd.nextInt(3) == 0) {
                            cutStreamShort(h, body);
                            continue;
                        }
                        int status = h.post("/v1/completions", body).statusCode();
                        if (status == 200) statusOk.incrementAndGet();
                        else statusOther.incrementAndGet();
                    }
                    return null;
                }));
            }
            Future<?> admin = pool.submit(() -> {
                SplittableRandom rnd = new SplittableRandom(99);
                for (int i = 0; i < 20; i++) {
                    String x = "x" + rnd.nextInt(3);
                    h.post(
                            "/v1/load_lora_adapter",
                            "{\"lora_name\":\"" + x + "\",\"lora_path\":\"" + dir.resolve(x) + "\"}");
                    h.post("/v1/completions", "{\"model\":\"" + x + "\",\"prompt\":\"hi\",\"max_tokens\":5}");
                    h.post("/v1/unload_lora_adapter", "{\"lora_name\":\"" + x + "\"}");
                }
                return null;
            });
            for (Future<?> c : clients) c.get(120, TimeUnit.SECONDS);
            admin.get(120, TimeUnit.SECONDS);
            trafficDone.set(true);
            scraper.get(60, TimeUnit.SECONDS);
            pool.shutdown();

            assertThat(violations).isEmpty();
            assertThat(scrapes.get()).isGreaterThan(20);
            assertThat(statusOk.get()).isGreaterThan(50);

            // After the workload drains, every running and waiting gauge is 0.
            PromPage end = Await.value("running and waiting back to 0", () -> {
                PromPage page = PromPage.parse(get(h, "/metrics"));
                return page.value("vllm:num_requests_running") == 0 && page.value("vllm:num_requests_waiting") == 0
                        ? page
                        : null;
            });
            assertThat(end.value("vllm:num_requests_running")).isZero();
            assertThat(end.value("vllm:num_requests_waiting")).isZero();
            assertThat(end.perAdapter("vllm:num_lora_requests_running").values())
                    .allMatch(v -> v == 0);
            assertThat(end.perAdapter("vllm:num_lora_requests_waiting").values())
                    .allMatch(v -> v == 0);
            double finished = end.all("vllm:request_success_total").stream()
                    .mapToDouble(PromPage.Sample::value)
                    .sum();
            assertThat(finished).isGreaterThanOrEqualTo(statusOk.get());
            assertThat(end.all("vllm:request_success_total").stream()
                            .filter(s -> s.labels().get("finished_reason").equals("abort"))
                            .findFirst()
                            .orElseThrow()
                            .value())
                    .isPositive();

            Path page = Files.writeString(dir.resolve("page.txt"), lastPage[0]);
            assertThat(PromtoolCheck.check(page)).isEmpty();
        }
    }

    private static void cutStreamShort(ServerHarness h, String body) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(h.base + "/v1/completions"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        HttpResponse<InputStream> r = h.http.send(req, HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = r.body()) {
            in.read(new byte[64]);
        }
    }

    static void check(PromPage p, ConcurrentLinkedQueue<String> violations) {
        Map<String, Double> running = p.perAdapter("vllm:num_lora_requests_running");
        Map<String, Double> waiting = p.perAdapter("vllm:num_lora_requests_waiting");
        double sumRunning =
                running.values().stream().mapToDouble(Double::doubleValue).sum();
        double sumWaiting =
                waiting.values().stream().mapToDouble(Double::doubleValue).sum();
        if (sumRunning > p.value("vllm:num_requests_running"))
            violations.add("adapter running sum exceeds total: " + running);
        if (sumWaiting > p.value("vllm:num_requests_waiting"))
            violations.add("adapter waiting sum exceeds total: " + waiting);
        Map<String, Double> byReason = new HashMap<>();
        for (PromPage.Sample s : p.all("vllm:num_requests_waiting_by_reason"))
            byReason.merge(s.labels().get("reason"), s.value(), Double::sum);
        if (!byReason.keySet().equals(Set.of("capacity", "deferred"))) {
            violations.add("waiting by reason has reasons " + byReason.keySet());
        } else if (byReason.get("capacity") < 0
                || byReason.get("deferred") < 0
                || byReason.get("capacity") + byReason.get("deferred") != p.value("vllm:num_requests_waiting")) {
            violations.add("waiting by reason " + byReason + " does not add up to waiting "
                    + p.value("vllm:num_requests_waiting"));
        }
        if (p.value("vllm:num_gpu_loaded_lora_adapters") > p.value("vllm:max_gpu_lora_adapters")) {
            violations.add("more adapters in slots than slots");
        }
        Set<String> inGpu = new HashSet<>();
        for (PromPage.Sample s : p.all("vllm:lora_adapter_loaded")) {
            if ("gpu".equals(s.labels().get("level"))) inGpu.add(s.labels().get("lora_name"));
        }
        if (inGpu.size() != (int) p.value("vllm:num_gpu_loaded_lora_adapters"))
            violations.add("gpu series != gpu count");
        running.forEach((name, v) -> {
            if (v > 0 && !inGpu.contains(name)) violations.add(name + " runs but is not loaded at level gpu");
        });
        List<PromPage.Sample> legacy = p.all("vllm:lora_requests_info");
        if (legacy.size() != 1) {
            violations.add("legacy gauge has " + legacy.size() + " series");
            return;
        }
        Set<String> legacyRunning = names(legacy.get(0).labels().get("running_lora_adapters"));
        Set<String> legacyWaiting = names(legacy.get(0).labels().get("waiting_lora_adapters"));
        Set<String> expectRunning = new HashSet<>();
        running.forEach((n, v) -> {
            if (v > 0) expectRunning.add(n);
        });
        Set<String> expectWaiting = new HashSet<>();
        waiting.forEach((n, v) -> {
            if (v > 0) expectWaiting.add(n);
        });
        if (!legacyRunning.equals(expectRunning))
            violations.add("legacy running " + legacyRunning + " != " + expectRunning);
        if (!legacyWaiting.equals(expectWaiting))
            violations.add("legacy waiting " + legacyWaiting + " != " + expectWaiting);
    }

    private static Set<String> names(String csv) {
        Set<String> s = new HashSet<>();
        if (csv != null)
            Arrays.stream(csv.split(","))
                    .map(String::trim)
                    .filter(x -> !x.isEmpty())
                    .forEach(s::add);
        return s;
    }

    private static String get(ServerHarness h, String path) {
        try {
            return h.get(path).body();
        } catch (Exception e) {
            throw new AssertionError("GET " + path + " failed", e);
        }
    }
}
