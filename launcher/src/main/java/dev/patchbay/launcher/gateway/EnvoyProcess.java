package dev.patchbay.launcher.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An Envoy process running one configuration file: started, awaited until its admin interface says it is live, asked
 * which port its listener took, and stopped. Several may run on one machine (no hot restart, so no shared memory).
 */
public final class EnvoyProcess implements AutoCloseable {
    /** How long Envoy may take to come up before the start counts as failed; it takes well under a second. */
    static final Duration START_LIMIT = Duration.ofSeconds(60);

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final Path adminAddressFile;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private String adminAddress;

    private EnvoyProcess(Process process, Path adminAddressFile) {
        this.process = process;
        this.adminAddressFile = adminAddressFile;
    }

    /**
     * Starts {@code envoy} on {@code configFile}, its output to {@code log} (or inherited when null), and waits until
     * it is live.
     */
    public static EnvoyProcess start(Path envoy, Path configFile, Path log, String logLevel)
            throws IOException, InterruptedException {
        Path adminAddressFile = Files.createTempFile("envoy-admin", ".txt");
        Files.delete(adminAddressFile); // Envoy writes it once the admin interface listens
        List<String> command = new ArrayList<>(List.of(
                envoy.toString(),
                "-c",
                configFile.toString(),
                "--disable-hot-restart",
                "--log-level",
                logLevel,
                "--admin-address-path",
                adminAddressFile.toString()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        if (log == null) {
            builder.inheritIO();
        } else {
            builder.redirectOutput(log.toFile());
        }
        EnvoyProcess started = new EnvoyProcess(builder.start(), adminAddressFile);
        try {
            started.awaitLive(log);
        } catch (IOException | RuntimeException | InterruptedException e) {
            started.close();
            throw e;
        }
        return started;
    }

    /** The release, such as 1.40.0, from what {@code envoy --version} prints; all it prints when it has none. */
    public static String versionNumber(Path envoy) throws IOException, InterruptedException {
        String printed = version(envoy);
        Matcher m = Pattern.compile("/(\\d+\\.\\d+\\.\\d+)/").matcher(printed);
        return m.find() ? m.group(1) : printed;
    }

    /** What {@code envoy --version} prints: its build and version. */
    public static String version(Path envoy) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(envoy.toString(), "--version")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor();
        return out;
    }

    private void awaitLive(Path log) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + START_LIMIT.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IOException("envoy exited with " + process.exitValue()
                        + (log == null ? "" : ":\n" + Files.readString(log)));
            }
            if (adminAddress == null && Files.exists(adminAddressFile)) {
                String written = Files.readString(adminAddressFile).trim();
                adminAddress = written.isEmpty() ? null : written;
            }
            if (adminAddress != null && admin("/ready").status() == 200) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("envoy was not live within " + START_LIMIT.toSeconds() + " s");
            }
            Thread.sleep(20);
        }
    }

    /** An answer of the admin interface; status 0 when it did not answer. */
    private record AdminAnswer(int status, String body) {}

    private AdminAnswer admin(String path) throws InterruptedException {
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create("http://" + adminAddress + path))
                            .timeout(Duration.ofSeconds(5))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return new AdminAnswer(r.statusCode(), r.body());
        } catch (IOException notListening) {
            return new AdminAnswer(0, "");
        }
    }

    /** A counter of Envoy's {@code /stats} ({@code cluster.pool.upstream_rq_retry}), 0 while it is not there. */
    public long counter(String name) throws IOException, InterruptedException {
        AdminAnswer stats =
                admin("/stats?usedonly&filter=" + URLEncoder.encode("^" + name + "$", StandardCharsets.UTF_8));
        if (stats.status() != 200) {
            throw new IOException("envoy's admin interface did not answer /stats: " + stats.status());
        }
        for (String line : stats.body().lines().toList()) {
            if (line.startsWith(name + ": ")) {
                return Long.parseLong(line.substring(name.length() + 2).trim());
            }
        }
        return 0;
    }

    /** The port the listener {@code name} is bound to (the one it took when configured with port 0). */
    public int listenerPort(String name) throws IOException, InterruptedException {
        AdminAnswer listeners = admin("/listeners?format=json");
        if (listeners.status() != 200) {
            throw new IOException("envoy's admin interface did not list its listeners: " + listeners.status());
        }
        for (JsonNode status : JSON.readTree(listeners.body()).path("listener_statuses")) {
            if (name.equals(status.path("name").asText())) {
                return status.path("local_address")
                        .path("socket_address")
                        .path("port_value")
                        .asInt();
            }
        }
        throw new IOException("envoy has no listener named " + name);
    }

    /**
     * Whether {@code cluster} has hosts and every one passes Envoy's health checks, by its admin interface's
     * {@code /clusters} ({@code picker::127.0.0.1:9002::health_flags::healthy}).
     */
    public boolean clusterHealthy(String cluster) throws InterruptedException {
        AdminAnswer clusters = admin("/clusters");
        if (clusters.status() != 200) {
            return false;
        }
        boolean any = false;
        for (String line : clusters.body().lines().toList()) {
            if (line.startsWith(cluster + "::") && line.contains("::health_flags::")) {
                any = true;
                if (!line.endsWith("::health_flags::healthy")) {
                    return false;
                }
            }
        }
        return any;
    }

    public Process process() {
        return process;
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        try {
            Files.deleteIfExists(adminAddressFile);
        } catch (IOException ignored) {
            // a temporary file left behind
        }
    }
}
