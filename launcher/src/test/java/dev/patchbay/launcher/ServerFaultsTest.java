package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two {@code patchbay serve} processes behind {@code patchbay route} under steady traffic, while one server is killed
 * with SIGKILL and later restarted on its port, and while both hosts stall (frozen with SIGSTOP for longer than the
 * router's staleness bound, so every scrape is late at the same moment). Only requests in flight on the killed server
 * may fail; nothing gets 503 while a server is healthy; the restarted server is back in rotation within 5 s.
 */
class ServerFaultsTest {
    static final List<String> ADAPTERS = List.of("a0", "a1", "a2", "a3");
    static final int RATE_PER_SECOND = 20;
    static final long RUN_MILLIS = 60_000,
            KILL_AT = 15_000,
            RESTART_AT = 35_000,
            STALL_FROM = 45_000,
            STALL_UNTIL = 55_000,
            WINDOW_MILLIS = 5_000;
    /** Each stall freezes both servers longer than the router's default 200 ms staleness bound. */
    static final long STALL_MILLIS = 600, STALL_EVERY_MILLIS = 1_500;

    static final Duration BACK_IN_ROTATION = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    final LauncherProcesses processes = new LauncherProcesses();
    final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** One request of the run: when it was sent and answered (ms since the start), its status and server. */
    record Outcome(long sentAt, long answeredAt, int status, String server) {
        boolean inFlightAt(long t) {
            return sentAt <= t && answeredAt >= t;
        }
    }

    @AfterEach
    void stop() throws InterruptedException {
        processes.close();
    }

    private SimAdapterServer server() {
        return new SimAdapterServer("fleet", dir, ADAPTERS, 2, 4, "2,0.01,0.1,0.2,40,3");
    }

    private String[] serveArgs(int port) {
        return server().serveCommand(port);
    }

    @Test
    void aKilledServerCostsOnlyItsInFlightRequestsAndAStalledPoolKeepsServing() throws Exception {
        server().writeAdapters();
        LauncherProcesses.Launched victim = processes.launch(serveArgs(0));
        LauncherProcesses.Launched survivor = processes.launch(serveArgs(0));
        int victimPort = LauncherProcesses.port(victim, LauncherProcesses.SERVING);
        int survivorPort = LauncherProcesses.port(survivor, LauncherProcesses.SERVING);
        String victimAddress = "127.0.0.1:" + victimPort;
        LauncherProcesses.Launched router = processes.launch(
                "route",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--endpoints",
                victimAddress + ",127.0.0.1:" + survivorPort);
        int routerPort = LauncherProcesses.port(router, LauncherProcesses.ROUTING);
        processes.awaitReady(routerPort, 2);

        ConcurrentLinkedQueue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Void>> sent = Collections.synchronizedList(new ArrayList<>());
        AtomicLong killedAt = new AtomicLong(-1), restartedAt = new AtomicLong(-1), servingAt = new AtomicLong(-1);
        AtomicReference<LauncherProcesses.Launched> restarted = new AtomicReference<>();
        int total = (int) (RUN_MILLIS * RATE_PER_SECOND / 1000);
        long start = System.nanoTime();
        // The schedule is the run: an open-loop 20 req/s, and each fault at its moment in it.
        ScheduledExecutorService clock = Executors.newScheduledThreadPool(4);
        List<ScheduledFuture<?>> faults = new ArrayList<>();
        for (int i = 0; i < total; i++) {
            int n = i;
            clock.schedule(
                    () -> sent.add(send(routerPort, ADAPTERS.get(n % ADAPTERS.size()), n, start, outcomes)),
                    n * 1000L / RATE_PER_SECOND,
                    TimeUnit.MILLISECONDS);
        }
        faults.add(clock.schedule(
                () -> {
                    victim.process().destroyForcibly();
                    killedAt.set(millisSince(start));
                    return victim.process().waitFor(30, TimeUnit.SECONDS);
                },
                KILL_AT,
                TimeUnit.MILLISECONDS));
        faults.add(clock.schedule(
                () -> {
                    restarted.set(processes.launch(serveArgs(victimPort)));
                    restartedAt.set(millisSince(start));
                    LauncherProcesses.port(restarted.get(), LauncherProcesses.SERVING);
                    servingAt.set(millisSince(start));
                    return null;
                },
                RESTART_AT,
                TimeUnit.MILLISECONDS));
        for (long t = STALL_FROM; t < STALL_UNTIL; t += STALL_EVERY_MILLIS) {
            faults.add(clock.schedule(() -> signalBoth("STOP", restarted.get(), survivor), t, TimeUnit.MILLISECONDS));
            faults.add(clock.schedule(
                    () -> signalBoth("CONT", restarted.get(), survivor), t + STALL_MILLIS, TimeUnit.MILLISECONDS));
        }
        clock.shutdown();
        assertThat(clock.awaitTermination(2, TimeUnit.MINUTES))
                .as("the schedule ran to its end")
                .isTrue();
        for (var fault : faults) fault.get(); // a fault that could not be injected fails the test here
        CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
        assertThat(servingAt.get()).as("the restarted server came up").isPositive();

        List<Outcome> all = new ArrayList<>(outcomes);
        printWindows(all, victimAddress, killedAt.get(), restartedAt.get(), servingAt.get());
        long inFlightAtKill = countInFlight(all, killedAt.get());
        List<Outcome> failed = all.stream().filter(o -> o.status() != 200).toList();
        assertThat(all).hasSize(total);
        assertThat(failed)
                .as("requests that did not get 200")
                .allMatch(o -> o.status() != 503)
                .allMatch(o -> o.inFlightAt(killedAt.get()), "were in flight when the server was killed");
        assertThat((long) failed.size()).isLessThanOrEqualTo(inFlightAtKill);
        long firstServedAfterRestart = all.stream()
                .filter(o -> o.status() == 200 && victimAddress.equals(o.server()) && o.sentAt() >= servingAt.get())
                .mapToLong(Outcome::sentAt)
                .min()
                .orElse(Long.MAX_VALUE);
        assertThat(firstServedAfterRestart - servingAt.get())
                .as("ms from the restarted server's start to its first request")
                .isLessThanOrEqualTo(BACK_IN_ROTATION.toMillis());
    }

    private static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** Sends {@code signal} to both hosts at once: a stalled host under SIGSTOP, thawed by SIGCONT. */
    private static Void signalBoth(String signal, LauncherProcesses.Launched first, LauncherProcesses.Launched second)
            throws IOException {
        signal(signal, first.process());
        signal(signal, second.process());
        return null;
    }

    private static void signal(String signal, Process p) throws IOException {
        try {
            int exit = new ProcessBuilder("kill", "-" + signal, String.valueOf(p.pid()))
                    .start()
                    .waitFor();
            if (exit != 0) throw new IOException("kill -" + signal + " " + p.pid() + " exited " + exit);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    private CompletableFuture<Void> send(
            int routerPort, String adapter, int i, long start, ConcurrentLinkedQueue<Outcome> outcomes) {
        String body = "{\"model\":\"" + adapter + "\",\"prompt\":\"the water\",\"max_tokens\":" + (8 + i * 7 % 24)
                + ",\"ignore_eos\":true}";
        long sentAt = millisSince(start);
        return http.sendAsync(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + routerPort + "/v1/completions"))
                                .timeout(Duration.ofSeconds(60))
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .handle((r, failure) -> {
                    outcomes.add(new Outcome(
                            sentAt,
                            millisSince(start),
                            r == null ? -1 : r.statusCode(),
                            r == null
                                    ? null
                                    : r.headers()
                                            .firstValue("x-gateway-destination-endpoint")
                                            .orElse(null)));
                    return null;
                });
    }

    private static long countInFlight(List<Outcome> all, long t) {
        return all.stream().filter(o -> o.inFlightAt(t)).count();
    }

    private static void printWindows(
            List<Outcome> all, String victim, long killedAt, long restartedAt, long servingAt) {
        System.out.printf(
                "server faults: killed at %.1f s (%d requests in flight), restarted at %.1f s, serving at %.1f s, "
                        + "both hosts stalled %d ms every %d ms from %d to %d s%n",
                killedAt / 1e3,
                countInFlight(all, killedAt),
                restartedAt / 1e3,
                servingAt / 1e3,
                STALL_MILLIS,
                STALL_EVERY_MILLIS,
                STALL_FROM / 1000,
                STALL_UNTIL / 1000);
        System.out.println(
                "window (s) | sent | 200 | 503 | other | served by the killed/restarted server | by the other");
        for (long w = 0; w < RUN_MILLIS; w += WINDOW_MILLIS) {
            final long from = w;
            List<Outcome> in = all.stream()
                    .filter(o -> o.sentAt() >= from && o.sentAt() < from + WINDOW_MILLIS)
                    .toList();
            long ok = in.stream().filter(o -> o.status() == 200).count();
            long unavailable = in.stream().filter(o -> o.status() == 503).count();
            long byVictim = in.stream()
                    .filter(o -> o.status() == 200 && victim.equals(o.server()))
                    .count();
            System.out.printf(
                    "%3d-%-3d | %4d | %4d | %3d | %3d | %4d | %4d%n",
                    from / 1000,
                    (from + WINDOW_MILLIS) / 1000,
                    in.size(),
                    ok,
                    unavailable,
                    in.size() - ok - unavailable,
                    byVictim,
                    ok - byVictim);
        }
    }
}
