package dev.patchbay.launcher;

import dev.patchbay.testkit.Await;
import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Two llm-d-inference-sim servers (the field's vLLM simulator, at the version {@code scripts/third-party.sh} pins) and
 * one {@code patchbay serve}, each its own process on loopback, all serving the base model {@link #BASE} with the
 * adapters {@link #ADAPTERS} and {@link #MAX_LORAS} batch slots: the fleet a router is put in front of, by
 * {@code patchbay route} or by Envoy with Patchbay's picker. It reads each server's own metrics, so a test can tell
 * where requests landed without taking the router's word for it.
 *
 * <p>The simulator is found at {@code <repository>/.patchbay/bin/llm-d-inference-sim}; without it (or at another
 * version than the pinned one) {@link #start} skips the test locally and fails it under CI.
 */
final class InferenceSimFleet implements AutoCloseable {
    static final String BASE = "base";
    static final List<String> ADAPTERS = List.of("sql", "chat");
    static final int MAX_LORAS = 2;
    /** Fast enough to keep the suite short, slow enough that a request runs for many scrapes. */
    static final String TIME_TO_FIRST_TOKEN = "50ms", INTER_TOKEN_LATENCY = "10ms";

    static final String SUCCESS = "vllm:request_success_total", RUNNING = "vllm:num_requests_running";
    private static final Pattern PINNED = Pattern.compile("(?m)^SIM_VERSION=(\\S+)$");
    private static final String LORA_INFO = "vllm:lora_requests_info{";

    /** One server of the fleet; {@code sim} for llm-d-inference-sim, else {@code patchbay serve}. */
    record Server(String name, int port, boolean sim) {
        String address() {
            return "127.0.0.1:" + port;
        }
    }

    private final LauncherProcesses processes;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<Server> sims;
    private final Server serve;
    private final String simVersion;

    private InferenceSimFleet(LauncherProcesses processes, List<Server> sims, Server serve, String simVersion) {
        this.processes = processes;
        this.sims = List.copyOf(sims);
        this.serve = serve;
        this.simVersion = simVersion;
    }

    /**
     * The simulator's binary and its version, checked against the version {@code scripts/third-party.sh} pins: the
     * link points at {@code .patchbay/tools/llm-d-inference-sim-<version>}, built from that version's module (whose
     * binary, built from the module cache, reports no version of its own).
     */
    static Path simBinary() throws IOException {
        Path root = RequiredTool.repositoryRoot();
        Matcher pinned = PINNED.matcher(Files.readString(root.resolve("scripts/third-party.sh")));
        if (!pinned.find()) {
            throw new IllegalStateException("scripts/third-party.sh pins no SIM_VERSION");
        }
        String hint = "scripts/third-party.sh sim builds it (Go 1.25 or newer; a few minutes the first time)";
        Path link = RequiredTool.thirdParty("llm-d-inference-sim");
        Path binary = link.toRealPath();
        String wanted = "llm-d-inference-sim-" + pinned.group(1);
        if (!binary.getFileName().toString().equals(wanted)) {
            throw RequiredTool.missing(
                    link + " is " + binary.getFileName() + ", not the pinned " + wanted + "; " + hint);
        }
        return binary;
    }

    /** Writes the adapters into {@code dir}, starts the three servers and waits until each answers. */
    static InferenceSimFleet start(Path dir) throws Exception {
        Path binary = simBinary();
        LauncherProcesses processes = new LauncherProcesses();
        try {
            return start(processes, binary, dir);
        } catch (Exception | AssertionError e) {
            processes.close();
            throw e;
        }
    }

    private static InferenceSimFleet start(LauncherProcesses processes, Path binary, Path dir) throws Exception {
        String version = binary.getFileName().toString().substring("llm-d-inference-sim-".length());
        System.out.println("llm-d-inference-sim " + version + " (" + binary + ")");
        SimAdapterServer server = new SimAdapterServer(
                        BASE, dir, ADAPTERS, MAX_LORAS, 4, SimAdapterServer.SIM_LATENCY_MS)
                .writeAdapters();
        LauncherProcesses.Launched serving = processes.launch(server.serveCommand(0));
        List<Server> sims = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            sims.add(startSim(processes, binary, dir, "sim" + i));
        }
        Server serve = new Server("serve", LauncherProcesses.port(serving, LauncherProcesses.SERVING), false);
        return new InferenceSimFleet(processes, sims, serve, version);
    }

    /**
     * One simulator on a free port. It takes no port 0, so the port is found free first; should another process take
     * it meanwhile, the simulator exits and another port is tried.
     */
    private static Server startSim(LauncherProcesses processes, Path binary, Path dir, String name) throws Exception {
        List<String> modules = new ArrayList<>();
        for (String adapter : ADAPTERS) {
            modules.add("{\"name\":\"" + adapter + "\",\"path\":\"" + dir.resolve(adapter) + "\",\"base_model_name\":\""
                    + BASE + "\"}");
        }
        for (int attempt = 1; ; attempt++) {
            int port = freePort();
            List<String> command = new ArrayList<>(List.of(
                    binary.toString(),
                    "--model",
                    BASE,
                    "--port",
                    Integer.toString(port),
                    "--max-loras",
                    Integer.toString(MAX_LORAS),
                    "--max-cpu-loras",
                    "4",
                    "--max-num-seqs",
                    "5",
                    "--max-model-len",
                    "4096",
                    "--time-to-first-token",
                    TIME_TO_FIRST_TOKEN,
                    "--inter-token-latency",
                    INTER_TOKEN_LATENCY,
                    "--lora-modules"));
            command.addAll(modules);
            LauncherProcesses.Launched sim = processes.launchProgram(command);
            HttpClient probe = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();
            boolean up = Await.value(name + " to answer /health or exit", () -> {
                if (!sim.process().isAlive()) {
                    return false;
                }
                try {
                    return probe.send(
                                                    HttpRequest.newBuilder(
                                                                    URI.create("http://127.0.0.1:" + port + "/health"))
                                                            .build(),
                                                    HttpResponse.BodyHandlers.discarding())
                                            .statusCode()
                                    == 200
                            ? true
                            : null;
                } catch (IOException e) {
                    return null;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            });
            if (up) {
                return new Server(name, port, true);
            }
            if (attempt == 3) {
                throw new AssertionError(name + " exited three times: " + sim.lines());
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    String simVersion() {
        return simVersion;
    }

    List<Server> sims() {
        return sims;
    }

    Server serve() {
        return serve;
    }

    /** The simulators, then {@code patchbay serve}. */
    List<Server> servers() {
        List<Server> all = new ArrayList<>(sims);
        all.add(serve);
        return all;
    }

    /** Every server's {@code ip:port}, comma-separated: a router's {@code --endpoints}. */
    String endpoints() {
        return String.join(",", servers().stream().map(Server::address).toList());
    }

    /** Requests the server has answered in full, by its own {@code vllm:request_success_total}. */
    double successes(Server server) throws Exception {
        return processes.sample(server.port(), SUCCESS, "");
    }

    /** Requests running on the server now, by its own {@code vllm:num_requests_running}. */
    double running(Server server) throws Exception {
        return processes.sample(server.port(), RUNNING, "");
    }

    /**
     * The label sets of the {@code vllm:lora_requests_info} series that carry the page's newest value, as
     * {@code running=...;waiting=...}: one, or several when changes fell within one second.
     */
    List<String> newestLoraSeries(Server server) throws Exception {
        double newest = Double.NEGATIVE_INFINITY;
        List<String> series = new ArrayList<>();
        for (String line : processes.get(server.port(), "/metrics").lines().toList()) {
            if (!line.startsWith(LORA_INFO)) {
                continue;
            }
            double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            if (value > newest) {
                newest = value;
                series.clear();
            }
            if (value == newest) {
                series.add("running=" + label(line, "running_lora_adapters") + ";waiting="
                        + label(line, "waiting_lora_adapters"));
            }
        }
        return series;
    }

    private static String label(String line, String name) {
        Matcher m = Pattern.compile(name + "=\"([^\"]*)\"").matcher(line);
        return m.find() ? m.group(1) : "";
    }

    /** Whether one of the newest series lists {@code adapter} as running. */
    boolean newestSeriesRun(Server server, String adapter) throws Exception {
        for (String series : newestLoraSeries(server)) {
            String running = series.substring("running=".length(), series.indexOf(';'));
            if (List.of(running.split(",")).contains(adapter)) {
                return true;
            }
        }
        return false;
    }

    /** Loads {@code adapter} on {@code server} at run time, through vLLM's {@code /v1/load_lora_adapter}. */
    void loadAdapter(Server server, String adapter, Path path) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create("http://" + server.address() + "/v1/load_lora_adapter"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(
                                "{\"lora_name\":\"" + adapter + "\",\"lora_path\":\"" + path + "\"}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new AssertionError(
                    server.name() + " refused to load " + adapter + ": " + r.statusCode() + " " + r.body());
        }
    }

    /** Stops the fleet's processes. */
    @Override
    public void close() throws InterruptedException {
        processes.close();
    }
}
