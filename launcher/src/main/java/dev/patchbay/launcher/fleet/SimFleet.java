package dev.patchbay.launcher.fleet;

import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.launcher.Main;
import dev.patchbay.launcher.field.ChildProcess;
import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Model servers for a benchmark or a conformance run: {@code patchbay serve} processes on the simulated model, each
 * knowing the same PEFT adapters (written once to one folder), on free loopback ports.
 */
public final class SimFleet implements AutoCloseable {
    private static final Pattern SERVING = Pattern.compile("serving .* on http://127\\.[0-9.]+:(\\d+)");
    private static final Duration START_LIMIT = Duration.ofSeconds(120);

    /**
     * @param servers      how many processes
     * @param base         the base model's name (served as {@code sim:<base>})
     * @param adapters     adapters every server knows
     * @param maxLoras     batch slots per server ({@code --max-loras})
     * @param maxCpuLoras  adapters kept in host memory per server ({@code --max-cpu-loras})
     * @param maxNumSeqs   requests in a batch at most ({@code --max-num-seqs})
     * @param simLatencyMs the simulated model's latencies ({@code --sim-latency-ms})
     * @param heap         each server's maximum heap ({@code -Xmx}), such as {@code 256m}
     * @param extraArgs    more {@code serve} flags, such as {@code --allow-runtime-lora-updating}
     */
    public record Settings(
            int servers,
            String base,
            List<String> adapters,
            int maxLoras,
            int maxCpuLoras,
            int maxNumSeqs,
            String simLatencyMs,
            String heap,
            List<String> extraArgs) {
        public Settings {
            adapters = List.copyOf(adapters);
            extraArgs = List.copyOf(extraArgs);
        }

        /** Servers with no flags beyond these. */
        public Settings(
                int servers,
                String base,
                List<String> adapters,
                int maxLoras,
                int maxCpuLoras,
                int maxNumSeqs,
                String simLatencyMs,
                String heap) {
            this(servers, base, adapters, maxLoras, maxCpuLoras, maxNumSeqs, simLatencyMs, heap, List.of());
        }

        /** The same servers with {@code more} flags besides. */
        public Settings withExtraArgs(List<String> more) {
            List<String> all = new ArrayList<>(extraArgs);
            all.addAll(more);
            return new Settings(servers, base, adapters, maxLoras, maxCpuLoras, maxNumSeqs, simLatencyMs, heap, all);
        }

        /** The command line of one server, after {@code serve}. */
        List<String> serveArgs(String host, Path adapterDir) {
            List<String> args = new ArrayList<>(List.of(
                    "--model",
                    "sim:" + base,
                    "--host",
                    host,
                    "--port",
                    "0",
                    "--demo-adapters",
                    "0",
                    "--enable-lora",
                    "--max-loras",
                    Integer.toString(maxLoras),
                    "--max-cpu-loras",
                    Integer.toString(maxCpuLoras),
                    "--max-num-seqs",
                    Integer.toString(maxNumSeqs),
                    "--sim-latency-ms",
                    simLatencyMs,
                    "--lora-allowed-dirs",
                    adapterDir.toString(),
                    "--disable-log-stats"));
            for (String adapter : adapters) {
                args.addAll(List.of("--lora-modules", adapter + "=" + adapterDir.resolve(adapter)));
            }
            args.addAll(extraArgs);
            return args;
        }
    }

    private final List<ChildProcess> processes;
    private final List<Endpoint> servers;
    private final ServerPages pages;
    private final Settings settings;

    private SimFleet(Settings settings, List<ChildProcess> processes, List<Endpoint> servers) {
        this.settings = settings;
        this.processes = processes;
        this.servers = List.copyOf(servers);
        this.pages = new ServerPages(HttpClient.newHttpClient(), this.servers);
    }

    /** Writes the adapters under {@code dir}, starts the servers (logs beside them) and returns once all serve. */
    public static SimFleet start(Settings settings, Path dir) throws IOException, InterruptedException {
        Path adapterDir = dir.resolve("adapters");
        for (String adapter : settings.adapters()) {
            PeftWriter.write(
                    adapterDir.resolve(adapter),
                    SimModel.DEFAULT_CONFIG,
                    settings.base(),
                    8,
                    16,
                    List.of("q_proj", "v_proj"),
                    adapter.hashCode());
        }
        List<ChildProcess> processes = new ArrayList<>();
        List<Endpoint> servers = new ArrayList<>();
        try {
            for (int i = 0; i < settings.servers(); i++) {
                List<String> command = new ArrayList<>(ownJvm(settings.heap()));
                command.add("serve");
                command.addAll(settings.serveArgs(host(i), adapterDir));
                processes.add(ChildProcess.start("server-" + i, command, dir.resolve("server-" + i + ".log")));
            }
            for (ChildProcess process : processes) {
                int port = process.await("report its port", START_LIMIT, () -> port(process));
                servers.add(new Endpoint(host(servers.size()), port));
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            processes.forEach(ChildProcess::close);
            throw e;
        }
        return new SimFleet(settings, processes, servers);
    }

    /**
     * Server {@code i}'s address: 127.0.0.{i+1}, one loopback address each, as each pod of a pool has an IP of its
     * own (llm-d's picker, for one, tells endpoints of a subset hint apart by IP alone).
     */
    static String host(int i) {
        return "127.0.0." + (i + 1);
    }

    /** This launcher in a JVM of its own: the same Java and class path. */
    public static List<String> ownJvm(String heap) {
        return List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-Xmx" + heap,
                "-XX:+UseSerialGC",
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName());
    }

    private static Integer port(ChildProcess process) {
        for (String line : process.lines()) {
            Matcher m = SERVING.matcher(line);
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
        }
        return null;
    }

    public List<Endpoint> servers() {
        return servers;
    }

    public ServerPages pages() {
        return pages;
    }

    public Settings settings() {
        return settings;
    }

    /** The base model's name as the servers list it ({@code sim:} left out). */
    public String baseModel() {
        return settings.base();
    }

    /** Stops every server, as the pool going away. */
    public void stopAll() {
        processes.forEach(ChildProcess::close);
    }

    @Override
    public void close() {
        stopAll();
    }
}
