package dev.patchbay.launcher;

import dev.patchbay.launcher.gateway.EnvoyConfig;
import dev.patchbay.launcher.gateway.EnvoyProcess;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The gateway path as separate processes: Patchbay's picker ({@code patchbay route --ext-proc-port}) over a pool of
 * model servers, and real Envoys running {@code deploy/envoy/envoy.yaml} in front of it. The picker reads its pool
 * from a file, so a test can change the pool, and it can be killed and started again on the same ports while the
 * Envoys run on.
 */
final class EnvoyGateway implements AutoCloseable {
    static final Pattern EXT_PROC = Pattern.compile("ext_proc \\(gRPC\\) on 127\\.0\\.0\\.1:(\\d+)");
    static final Pattern HEALTH = Pattern.compile("gRPC health on 127\\.0\\.0\\.1:(\\d+)");

    private final LauncherProcesses processes;
    private final Path dir;
    private final Path envoyBinary;
    private final Path poolFile;
    private final Path routerConfig;
    private final List<Endpoint> pool;
    private final List<EnvoyProcess> envoys = new ArrayList<>();
    private LauncherProcesses.Launched picker;
    private int pickerHttpPort;
    private int extProcPort;
    private int healthPort;

    /**
     * @param servers      the model servers, on 127.0.0.1
     * @param routerConfig the picker's router.json
     */
    EnvoyGateway(LauncherProcesses processes, Path dir, List<Integer> servers, String routerConfig) throws IOException {
        this.processes = processes;
        this.dir = dir;
        this.envoyBinary = RequiredTool.thirdParty("envoy");
        this.pool =
                servers.stream().map(port -> new Endpoint("127.0.0.1", port)).toList();
        this.poolFile = dir.resolve("pool.txt");
        this.routerConfig = dir.resolve("router.json");
        Files.writeString(this.routerConfig, routerConfig);
        writePool(pool);
    }

    Path envoyBinary() {
        return envoyBinary;
    }

    /** Starts the picker: on free ports the first time, on the same ports after {@link #killPicker()}. */
    void startPicker() throws IOException {
        picker = processes.launch(
                "route",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--staleness",
                "1s",
                "--endpoints-file",
                poolFile.toString(),
                "--config",
                routerConfig.toString(),
                "--ext-proc-port",
                Integer.toString(extProcPort),
                "--grpc-health-port",
                Integer.toString(healthPort));
        pickerHttpPort = LauncherProcesses.port(picker, LauncherProcesses.ROUTING);
        extProcPort = LauncherProcesses.port(picker, EXT_PROC);
        healthPort = LauncherProcesses.port(picker, HEALTH);
    }

    /** Kills the picker as a crash would (SIGKILL): its streams end without a goodbye. */
    void killPicker() throws InterruptedException {
        picker.process().destroyForcibly().waitFor();
    }

    int pickerHttpPort() {
        return pickerHttpPort;
    }

    /** The picker's pool: the servers it may send to (the file it watches). */
    void writePool(List<Endpoint> endpoints) throws IOException {
        Path next = dir.resolve("pool.txt.next");
        Files.writeString(
                next,
                String.join("\n", endpoints.stream().map(Endpoint::address).toList()) + "\n");
        Files.move(next, poolFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    List<Endpoint> pool() {
        return pool;
    }

    /** A real Envoy in front of the picker, on a free port; its log goes to {@code envoy-<mode>.log}. */
    EnvoyProcess startEnvoy(EnvoyConfig.FailureMode mode) throws IOException, InterruptedException {
        Path config = dir.resolve("envoy-" + mode.inferencePoolName() + ".yaml");
        Files.writeString(
                config,
                EnvoyConfig.render(new EnvoyConfig.Gateway(
                        "127.0.0.1", 0, 0, new Endpoint("127.0.0.1", extProcPort), healthPort, mode, pool)));
        EnvoyProcess envoy = EnvoyProcess.start(
                envoyBinary, config, dir.resolve("envoy-" + mode.inferencePoolName() + ".log"), "info");
        envoys.add(envoy);
        return envoy;
    }

    @Override
    public void close() throws InterruptedException {
        for (EnvoyProcess envoy : envoys) {
            envoy.close();
        }
    }
}
