package dev.patchbay.launcher;

import dev.patchbay.launcher.field.ChildProcess;
import dev.patchbay.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Starts this build's launcher as separate JVMs, as an operator runs {@code patchbay serve} and {@code patchbay route},
 * collects their output, reads the ports they report and their /metrics samples, and stops them all at the end.
 */
final class LauncherProcesses implements AutoCloseable {
    static final Pattern SERVING = Pattern.compile("serving .* on http://127\\.0\\.0\\.1:(\\d+)");
    static final Pattern ROUTING = Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+)");

    /** A server drains its requests on SIGTERM; after this it is killed. */
    static final Duration STOP_GRACE = Duration.ofSeconds(30);

    private final List<ChildProcess> processes = new ArrayList<>();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** A launched process; its output lines are kept in memory as they come. */
    record Launched(ChildProcess child) {
        Process process() {
            return child.process();
        }

        List<String> lines() {
            return child.lines();
        }
    }

    Launched launch(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName()));
        command.addAll(List.of(args));
        return launch("patchbay " + (args.length == 0 ? "" : args[0]), command);
    }

    /** Any program (a server of the field beside Patchbay's), its output collected and the process stopped alike. */
    Launched launchProgram(List<String> command) throws IOException {
        return launch(Path.of(command.getFirst()).getFileName().toString(), command);
    }

    private Launched launch(String name, List<String> command) throws IOException {
        ChildProcess child = ChildProcess.start(name, command, null);
        synchronized (processes) {
            processes.add(child);
        }
        return new Launched(child);
    }

    /** The port a launched process reports, once it reports it; fails at once if the process dies first. */
    static int port(Launched l, Pattern pattern) {
        return Await.value("the process to report its port", () -> {
            for (String line : l.lines()) {
                Matcher m = pattern.matcher(line);
                if (m.find()) return Integer.parseInt(m.group(1));
            }
            if (!l.process().isAlive()) {
                throw new AssertionError(
                        "the process exited with " + l.process().exitValue() + ": " + l.lines());
            }
            return null;
        });
    }

    String get(int port, String path) throws Exception {
        return http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    /** The sum of a family's samples that carry {@code label} (any when empty), from a /metrics page. */
    double sample(int port, String family, String label) throws Exception {
        double sum = 0;
        for (String line : get(port, "/metrics").lines().toList()) {
            if ((line.startsWith(family + "{") || line.startsWith(family + " ")) && line.contains(label)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** Waits until the router's own metrics say exactly {@code n} endpoints are ready. */
    void awaitReady(int routerPort, int n) {
        Await.until("the router sees " + n + " ready endpoints", () -> {
            try {
                return sample(routerPort, "patchbay_router_endpoint_ready", "") == n;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** Stops every launched process and what it started, all at once, each with its grace period. */
    @Override
    public void close() throws InterruptedException {
        List<ChildProcess> all;
        synchronized (processes) {
            all = new ArrayList<>(processes);
        }
        try (ExecutorService stopping = Executors.newVirtualThreadPerTaskExecutor()) {
            for (ChildProcess child : all) {
                stopping.submit(() -> child.close(STOP_GRACE));
            }
        }
    }
}
