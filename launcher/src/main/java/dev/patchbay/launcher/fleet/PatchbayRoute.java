package dev.patchbay.launcher.fleet;

import dev.patchbay.launcher.field.ChildProcess;
import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Patchbay's router as an operator runs it, in a process of its own beside the others: the reverse proxy, and with
 * {@code picker} its ext_proc face and gRPC health for a data plane in front.
 */
public final class PatchbayRoute implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on [0-9.]+:(\\d+)");
    private static final Pattern EXT_PROC = Pattern.compile("ext_proc \\(gRPC\\) on [0-9.]+:(\\d+)");
    private static final Pattern HEALTH = Pattern.compile("gRPC health on [0-9.]+:(\\d+)");
    private static final Duration START_LIMIT = Duration.ofSeconds(120);

    private final ChildProcess process;
    private final int port;
    private final int extProcPort;
    private final int healthPort;

    private PatchbayRoute(ChildProcess process, int port, int extProcPort, int healthPort) {
        this.process = process;
        this.port = port;
        this.extProcPort = extProcPort;
        this.healthPort = healthPort;
    }

    /**
     * Starts {@code patchbay route} over {@code servers} with {@code profile}, on free ports of 127.0.0.1, its log and
     * configuration under {@code dir}, and returns once it listens.
     *
     * @param picker with the ext_proc face and gRPC health as well
     */
    public static PatchbayRoute start(List<Endpoint> servers, String profile, boolean picker, Path dir)
            throws IOException, InterruptedException {
        return start(servers, profile, null, picker, List.of(), dir);
    }

    /**
     * As {@link #start(List, String, boolean, Path)}, with {@code profile} taken from {@code profileFile} (null: a
     * built-in profile) and {@code extraArgs} added to route's command line, such as {@code --placement on}.
     */
    public static PatchbayRoute start(
            List<Endpoint> servers, String profile, Path profileFile, boolean picker, List<String> extraArgs, Path dir)
            throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path config = dir.resolve("router.json");
        String fileKey = profileFile == null
                ? ""
                : ", \"profileFile\": \""
                        + profileFile.toAbsolutePath().toString().replace("\\", "\\\\") + "\"";
        Files.writeString(config, "{\"profile\": \"" + profile + "\"" + fileKey + "}\n");
        List<String> command = new ArrayList<>(SimFleet.ownJvm("512m"));
        command.addAll(List.of(
                "route",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--config",
                config.toString(),
                "--endpoints",
                String.join(",", servers.stream().map(Endpoint::address).toList())));
        if (picker) {
            command.addAll(List.of("--ext-proc-port", "0", "--grpc-health-port", "0"));
        }
        command.addAll(extraArgs);
        ChildProcess process = ChildProcess.start("patchbay-route", command, dir.resolve("route.log"));
        try {
            int port = process.await("listen", START_LIMIT, () -> find(process, LISTENING));
            int extProc = picker ? process.await("serve ext_proc", START_LIMIT, () -> find(process, EXT_PROC)) : 0;
            int health = picker ? process.await("serve gRPC health", START_LIMIT, () -> find(process, HEALTH)) : 0;
            return new PatchbayRoute(process, port, extProc, health);
        } catch (IOException | InterruptedException | RuntimeException e) {
            process.close();
            throw e;
        }
    }

    private static Integer find(ChildProcess process, Pattern pattern) {
        for (String line : process.lines()) {
            Matcher m = pattern.matcher(line);
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
        }
        return null;
    }

    /** The reverse proxy's address. */
    public URI uri() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** The ext_proc face, when started as a picker. */
    public Endpoint extProc() {
        return new Endpoint("127.0.0.1", extProcPort);
    }

    public int healthPort() {
        return healthPort;
    }

    public ChildProcess process() {
        return process;
    }

    @Override
    public void close() {
        process.close();
    }
}
