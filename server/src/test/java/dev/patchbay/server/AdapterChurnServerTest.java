package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.testkit.Await;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Over real HTTP: 1,000 requests in 4 rounds across 50 adapters (4 slots, 8 host places), streams and non-streams,
 * a third of the streams hung up after their first event, and in every round 3 adapters unloaded with requests in
 * flight and loaded again at once under the same name. After every round each request that was answered 200 is
 * counted exactly once in {@code vllm:request_success_total} and every running and waiting gauge is back to 0.
 */
class AdapterChurnServerTest {
    private static final int ADAPTERS = 50;
    private static final int ROUNDS = 4;
    private static final int PER_ROUND = 250;
    private static final int CLIENTS = 16;
    private static final int UNLOADS_PER_ROUND = 3;
    /** Only turns a stalled request into a failure that names it; no request comes near it. */
    private static final Duration STALL = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private final AtomicInteger unloadsInFlight = new AtomicInteger();

    @Test
    void noRequestIsLostAndEveryGaugeReturnsToZeroAfterEachRound() throws Exception {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < ADAPTERS; i++) names.add("c" + i);
        try (ServerHarness h = new ServerHarness(
                dir,
                names,
                "--enable-lora",
                "--max-loras",
                "4",
                "--max-cpu-loras",
                "8",
                "--allow-runtime-lora-updating",
                "--sim-latency-ms",
                "1,0.01,0.05,0.1,5,1")) {
            ExecutorService pool = Executors.newFixedThreadPool(CLIENTS + UNLOADS_PER_ROUND + 1);
            SplittableRandom seeds = new SplittableRandom(42);
            try {
                for (int round = 0; round < ROUNDS; round++) {
                    runRound(h, pool, names, round, seeds.split());
                }
            } finally {
                pool.shutdownNow();
            }
            // The workload reached the states it is meant to churn through.
            assertThat(unloadsInFlight.get())
                    .as("unloads that found requests in flight")
                    .isPositive();
            assertThat(page(h).all("vllm:request_success_total").stream()
                            .filter(x -> x.labels().get("finished_reason").equals("abort"))
                            .mapToDouble(PromPage.Sample::value)
                            .sum())
                    .as("streams hung up while running")
                    .isPositive();
        }
    }

    private void runRound(ServerHarness h, ExecutorService pool, List<String> names, int round, SplittableRandom rnd)
            throws Exception {
        double before = successTotal(page(h));
        AtomicInteger next = new AtomicInteger();
        AtomicInteger answered200 = new AtomicInteger();
        Map<Integer, Integer> otherStatuses = new ConcurrentHashMap<>();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        long[] clientSeeds = new long[CLIENTS];
        for (int c = 0; c < CLIENTS; c++) clientSeeds[c] = rnd.nextLong();
        // The unloads start once a fifth of the round has been sent, so they find requests in flight.
        CountDownLatch trafficUnderWay = new CountDownLatch(PER_ROUND / 5);

        List<Future<?>> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            SplittableRandom cr = new SplittableRandom(clientSeeds[c]);
            clients.add(pool.submit(() -> {
                while (next.getAndIncrement() < PER_ROUND) {
                    String model = cr.nextInt(8) == 0 ? "test-model" : names.get(skewed(cr, names.size()));
                    boolean stream = cr.nextBoolean();
                    boolean hangUp = stream && cr.nextInt(3) == 0;
                    String body = "{\"model\":\"" + model + "\",\"prompt\":\"churn " + round + "\",\"max_tokens\":"
                            + (1 + cr.nextInt(24)) + ",\"ignore_eos\":true,\"stream\":" + stream + "}";
                    trafficUnderWay.countDown();
                    try {
                        int status = send(h, body, hangUp);
                        if (status == 200) answered200.incrementAndGet();
                        else otherStatuses.merge(status, 1, Integer::sum);
                    } catch (Exception e) {
                        failures.add(model + " " + (stream ? "stream" : "") + ": " + e);
                    }
                }
                return null;
            }));
        }
        List<String> victims = new ArrayList<>();
        while (victims.size() < UNLOADS_PER_ROUND) {
            String v = names.get(skewed(rnd, 12)); // hot adapters: they have requests in flight
            if (!victims.contains(v)) victims.add(v);
        }
        List<Future<?>> churn = new ArrayList<>();
        for (String v : victims) {
            churn.add(pool.submit(() -> {
                trafficUnderWay.await();
                PromPage p = page(h);
                if (p.perAdapter("vllm:num_lora_requests_running").getOrDefault(v, 0.0)
                                + p.perAdapter("vllm:num_lora_requests_waiting").getOrDefault(v, 0.0)
                        > 0) {
                    unloadsInFlight.incrementAndGet();
                }
                int unload = h.post("/v1/unload_lora_adapter", "{\"lora_name\":\"" + v + "\"}")
                        .statusCode();
                if (unload != 200) failures.add("unload " + v + " answered " + unload);
                // Loaded again at once, while it drains: 400 (still there) is an answer too; the round's end reloads.
                int reload = load(h, v);
                if (reload != 200 && reload != 400) failures.add("reload " + v + " answered " + reload);
                return null;
            }));
        }
        for (Future<?> f : clients) f.get(10, TimeUnit.MINUTES);
        for (Future<?> f : churn) f.get(10, TimeUnit.MINUTES);
        assertThat(failures).as("round %d: requests without an answer", round).isEmpty();
        assertThat(otherStatuses.keySet())
                .as("round %d: statuses other than 200 (404: an adapter mid-unload)", round)
                .isSubsetOf(404);

        double expected = before + answered200.get();
        PromPage end = Await.value(
                "round " + round + ": " + answered200.get() + " answered requests counted and gauges at 0", () -> {
                    PromPage p = page(h);
                    return successTotal(p) == expected
                                    && p.value("vllm:num_requests_running") == 0
                                    && p.value("vllm:num_requests_waiting") == 0
                            ? p
                            : null;
                });
        assertThat(end.perAdapter("vllm:num_lora_requests_running").values()).allMatch(x -> x == 0);
        assertThat(end.perAdapter("vllm:num_lora_requests_waiting").values()).allMatch(x -> x == 0);
        assertThat(end.all("vllm:lora_requests_info").get(0).labels())
                .containsEntry("running_lora_adapters", "")
                .containsEntry("waiting_lora_adapters", "");
        // Nothing counted twice: a moment later the counter has not moved past the answers.
        assertThat(successTotal(page(h))).isEqualTo(expected);

        for (String v : victims) {
            Await.until(v + " served again", () -> reloaded(h, v));
        }
    }

    /** Low indices far more often than high ones, as with real adapter popularity. */
    private static int skewed(SplittableRandom rnd, int n) {
        return Math.min(n - 1, (int) (n * Math.pow(rnd.nextDouble(), 2)));
    }

    private static int send(ServerHarness h, String body, boolean hangUpAfterFirstEvent) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(h.base + "/v1/completions"))
                .timeout(STALL)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        if (!hangUpAfterFirstEvent)
            return h.http.send(req, HttpResponse.BodyHandlers.ofString()).statusCode();
        HttpResponse<InputStream> r = h.http.send(req, HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = r.body()) {
            in.read(new byte[64]);
        }
        return r.statusCode();
    }

    private int load(ServerHarness h, String name) throws Exception {
        return h.post(
                        "/v1/load_lora_adapter",
                        "{\"lora_name\":\"" + name + "\",\"lora_path\":\"" + dir.resolve(name) + "\"}")
                .statusCode();
    }

    /** Loads the name; true once that succeeds or the name is served (the drained adapter is back). */
    private boolean reloaded(ServerHarness h, String name) {
        try {
            return load(h, name) == 200 || modelListed(h, name);
        } catch (Exception e) {
            throw new AssertionError("load " + name + " failed", e);
        }
    }

    private static boolean modelListed(ServerHarness h, String name) {
        try {
            return ServerHarness.json(h.get("/v1/models"))
                    .path("data")
                    .findValuesAsText("id")
                    .contains(name);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static PromPage page(ServerHarness h) {
        try {
            return PromPage.parse(h.get("/metrics").body());
        } catch (Exception e) {
            throw new AssertionError("GET /metrics failed", e);
        }
    }

    private static double successTotal(PromPage p) {
        return p.all("vllm:request_success_total").stream()
                .mapToDouble(PromPage.Sample::value)
                .sum();
    }
}
