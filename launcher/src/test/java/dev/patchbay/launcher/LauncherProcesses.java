package dev.patchbay.launcher;

import dev.patchbay.testkit.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Starts this build's launcher as separate JVMs, as an operator runs {@code patchbay serve} and {@code patchbay route},
 * collects their output, reads the ports they report and their /metrics samples, and stops them all at the end.
 */
final class LauncherProcesses implements AutoCloseable {
    static final Pattern SERVING = Pattern.compile("serving .* on http://127\\.0\\.0\\.1:(\\d+)");
    static final Pattern ROUTING = Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+)");

    private final List<Process> processes = new ArrayList<>();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** A launched process; its output lines are collected as they come. */
    record Launched(Process process, ConcurrentLinkedQueue<String> lines) {}

    Launched launch(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName()));
        command.addAll(List.of(args));
        return launchProgram(command);
    }

    /** Any program (a server of the field beside Patchbay's), its output collected and the process stopped alike. */
    Launched launchProgram(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        processes.add(p);
        ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
        Thread.ofVirtual().start(() -> collect(p.getInputStream(), lines));
        return new Launched(p, lines);
    }

    private static void collect(InputStream in, ConcurrentLinkedQueue<String> lines) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) lines.add(line);
        } catch (IOException ignored) {
            // the process ended
        }
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

    @Override
    public void close() throws InterruptedException {
        for (Process p : processes) p.destroy();
        for (Process p : processes) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) p.destroyForcibly();
        }
    }
}
