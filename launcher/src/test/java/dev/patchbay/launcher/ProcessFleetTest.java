package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three {@code patchbay serve} processes behind a {@code patchbay route} process, each its own JVM on loopback, as an
 * operator runs them: steady traffic to six adapters over six batch slots must find its adapter in a slot and spread
 * evenly over the servers.
 */
class ProcessFleetTest {
    static final List<String> ADAPTERS = List.of("a0", "a1", "a2", "a3", "a4", "a5");
    static final String LOOKUPS = "vllm:lora_cache_lookups_total",
            HITS = "vllm:lora_cache_hits_total",
            SUCCESS = "vllm:request_success_total",
            GPU = "level=\"gpu\"";

    @TempDir
    Path dir;

    final LauncherProcesses processes = new LauncherProcesses();
    final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @AfterEach
    void stop() throws InterruptedException {
        processes.close();
    }

    private double sample(int port, String family, String label) throws Exception {
        return processes.sample(port, family, label);
    }

    /**
     * {@code count} requests from {@code clients} threads, the adapters taken in turn so that each gets the same
     * share: steady traffic to all six.
     */
    private Map<Integer, AtomicInteger> traffic(int routerPort, int clients, int count) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        AtomicInteger next = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            futures.add(pool.submit(() -> {
                for (int i; (i = next.getAndIncrement()) < count; ) {
                    String body = "{\"model\":\"" + ADAPTERS.get(i % ADAPTERS.size())
                            + "\",\"prompt\":\"the water\",\"max_tokens\":" + (8 + i * 7 % 24)
                            + ",\"ignore_eos\":true}";
                    HttpResponse<String> r = http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + routerPort + "/v1/completions"))
                                    .timeout(Duration.ofSeconds(30))
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(body))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    statuses.computeIfAbsent(r.statusCode(), k -> new AtomicInteger())
                            .incrementAndGet();
                }
                return null;
            }));
        }
        for (Future<?> f : futures) f.get(180, TimeUnit.SECONDS);
        pool.shutdown();
        return statuses;
    }

    @Test
    void steadyTrafficFindsItsAdapterInASlotAndSpreadsEvenly() throws Exception {
        SimAdapterServer server =
                new SimAdapterServer("fleet", dir, ADAPTERS, 2, 2, SimAdapterServer.SIM_LATENCY_MS).writeAdapters();
        List<LauncherProcesses.Launched> servers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            servers.add(processes.launch(server.serveCommand(0)));
        }
        List<Integer> serverPorts = new ArrayList<>();
        for (LauncherProcesses.Launched s : servers)
            serverPorts.add(LauncherProcesses.port(s, LauncherProcesses.SERVING));
        LauncherProcesses.Launched router = processes.launch(
                "route",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--staleness",
                "1s",
                "--endpoints",
                String.join(",", serverPorts.stream().map(p -> "127.0.0.1:" + p).toList()));
        int routerPort = LauncherProcesses.port(router, LauncherProcesses.ROUTING);
        processes.awaitReady(routerPort, 3);

        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>(traffic(routerPort, 6, 120)); // warm-up
        double[] lookupsBefore = new double[3], hitsBefore = new double[3], servedBefore = new double[3];
        for (int i = 0; i < 3; i++) {
            lookupsBefore[i] = sample(serverPorts.get(i), LOOKUPS, GPU);
            hitsBefore[i] = sample(serverPorts.get(i), HITS, GPU);
            servedBefore[i] = sample(serverPorts.get(i), SUCCESS, "");
        }
        traffic(routerPort, 6, 360)
                .forEach((code, n) -> statuses.merge(code, n, (a, b) -> new AtomicInteger(a.get() + b.get())));
        double lookups = 0, hits = 0;
        double[] served = new double[3];
        for (int i = 0; i < 3; i++) {
            lookups += sample(serverPorts.get(i), LOOKUPS, GPU) - lookupsBefore[i];
            hits += sample(serverPorts.get(i), HITS, GPU) - hitsBefore[i];
            served[i] = sample(serverPorts.get(i), SUCCESS, "") - servedBefore[i];
        }

        assertThat(statuses.keySet()).containsOnly(200);
        System.out.printf(
                "process fleet: slot hit ratio %.3f, requests per server %s%n",
                hits / lookups, Arrays.toString(served));
        assertThat(lookups).isGreaterThanOrEqualTo(360);
        assertThat(hits / lookups)
                .as("share of scheduled requests whose adapter was already in a slot")
                .isGreaterThanOrEqualTo(0.9);
        double busiest = Arrays.stream(served).max().orElseThrow();
        double leastBusy = Arrays.stream(served).min().orElseThrow();
        assertThat(Arrays.stream(served).sum()).isEqualTo(360);
        assertThat(busiest).as("requests per server " + Arrays.toString(served)).isLessThanOrEqualTo(1.25 * leastBusy);
    }
}
