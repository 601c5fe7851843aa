package dev.patchbay.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.launcher.Main;
import dev.patchbay.testkit.Await;
import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every PromQL query of deploy/grafana/patchbay-lora.json returns data from a real Prometheus (Debian's) that
 * scrapes two model servers and the router under LoRA traffic. The servers and the router run as separate JVMs
 * with the arguments and environment the chart gives their containers (addresses, ports and paths moved to this
 * machine), so the test also shows those arguments start working processes.
 */
class DashboardQueriesTest {
    private static final Pattern SERVING = Pattern.compile("serving .* on http://127\\.0\\.0\\.1:(\\d+)");
    private static final Pattern ROUTING = Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+)");
    /** What Grafana puts in for the dashboard's variables: every model, every adapter, a rate window of a few scrapes. */
    private static final Map<String, String> VARIABLES =
            Map.of("$model_name", ".*", "$lora_name", ".*", "$__rate_interval", "20s");

    private static final List<String> ADAPTERS =
            List.of("red-lora", "green-lora", "blue-lora", "amber-lora", "runtime-lora");

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void everyDashboardQueryReturnsDataFromServersAndRouterUnderTraffic() throws Exception {
        Path prometheus = RequiredTool.onPath("prometheus", "Debian package 'prometheus'");
        // One batch slot and room for two adapters in host memory, with five adapters in turn: loads, cache
        // misses and evictions at both tiers keep coming.
        Manifests m = Manifests.check(Tools.helmTemplate(List.of(
                "-f",
                Repo.chart().resolve("examples/router-proxy.yaml").toString(),
                "--set",
                "modelServers.demoAdapters=0",
                "--set",
                "modelServers.lora.maxLoras=1",
                "--set",
                "modelServers.lora.maxCpuLoras=2")));
        JsonNode server = Manifests.container(m.one("Deployment", "patchbay-server"), "server");
        JsonNode router = Manifests.container(m.one("Deployment", "patchbay-router"), "router");

        Path resolver = Files.createDirectories(dir.resolve("adapters"));
        for (String name : ADAPTERS.subList(0, 4)) writeAdapter(resolver.resolve(name), name);
        // Not under its own name: only the runtime API can serve it, so it is there only if the env var worked.
        writeAdapter(resolver.resolve("uploaded/runtime"), "runtime-lora");

        List<Integer> serverPorts = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Map<String, String> paths = Map.of(
                    "/adapters",
                    resolver.toString(),
                    "/var/cache/patchbay",
                    Files.createDirectories(dir.resolve("cache-" + i)).toString());
            Process p =
                    launch("server-" + i, remap(Manifests.strings(server.path("args")), paths), Manifests.env(server));
            serverPorts.add(reportedPort(p, "server-" + i, SERVING));
        }
        for (int port : serverPorts) {
            HttpResponse<String> r = post(
                    port,
                    "/v1/load_lora_adapter",
                    "{\"lora_name\":\"runtime-lora\",\"lora_path\":\"" + resolver.resolve("uploaded/runtime") + "\"}");
            assertThat(r.statusCode())
                    .as("runtime LoRA loading (VLLM_ALLOW_RUNTIME_LORA_UPDATING): " + r.body())
                    .isEqualTo(200);
        }

        Path configDir = Files.createDirectories(dir.resolve("router-config"));
        m.one("ConfigMap", "patchbay-router")
                .path("data")
                .properties()
                .forEach(e -> write(configDir.resolve(e.getKey()), e.getValue().asText()));
        Path poolFile = dir.resolve("pool/endpoints.txt");
        Files.createDirectories(poolFile.getParent());
        Files.writeString(
                poolFile, serverPorts.stream().map(p -> "127.0.0.1:" + p + "\n").reduce("", String::concat));
        Process routerProcess = launch(
                "router",
                remap(
                        Manifests.strings(router.path("args")),
                        Map.of(
                                "/etc/patchbay/router",
                                configDir.toString(),
                                "/var/run/patchbay/pool",
                                poolFile.getParent().toString())),
                Manifests.env(router));
        int routerPort = reportedPort(routerProcess, "router", ROUTING);

        int promPort;
        try (var s = new ServerSocket(0)) {
            promPort = s.getLocalPort();
        }
        Path promConfig = Files.writeString(
                dir.resolve("prometheus.yml"), """
                global:
                  scrape_interval: 1s
                scrape_configs:
                  - job_name: patchbay-server
                    static_configs:
                      - targets: ['127.0.0.1:%d', '127.0.0.1:%d']
                  - job_name: patchbay-router
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                """.formatted(serverPorts.get(0), serverPorts.get(1), routerPort));
        processes.add(new ProcessBuilder(
                        prometheus.toString(),
                        "--config.file=" + promConfig,
                        "--storage.tsdb.path=" + dir.resolve("tsdb"),
                        "--web.listen-address=127.0.0.1:" + promPort)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("prometheus.log").toFile())
                .start());

        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger sent = new AtomicInteger();
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            int client = c;
            clients.add(Thread.ofVirtual().start(() -> {
                // Bounded in count; the test stops it as soon as every query has answered.
                for (int i = 0; i < 20_000 && !stop.get(); i++) {
                    int n = sent.getAndIncrement();
                    String model = n % 7 == 6 ? "patchbay-sim" : ADAPTERS.get((n + client) % ADAPTERS.size());
                    try {
                        int status = post(
                                        routerPort,
                                        "/v1/completions",
                                        "{\"model\":\"" + model + "\",\"prompt\":\"deploy check " + n
                                                + "\",\"max_tokens\":8}")
                                .statusCode();
                        statuses.computeIfAbsent(status, k -> new AtomicInteger())
                                .incrementAndGet();
                    } catch (IOException e) {
                        statuses.computeIfAbsent(-1, k -> new AtomicInteger()).incrementAndGet();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }));
        }

        Map<String, String> queries = dashboardQueries();
        assertThat(queries).hasSizeGreaterThanOrEqualTo(20);
        Map<String, String> lastSeen = new TreeMap<>();
        try {
            Await.until(
                    "every dashboard query to return data",
                    () -> {
                        for (var q : queries.entrySet()) {
                            if (!"data".equals(lastSeen.get(q.getKey())))
                                lastSeen.put(q.getKey(), answer(promPort, q.getValue()));
                        }
                        return lastSeen.values().stream().allMatch("data"::equals);
                    },
                    () -> lastSeen.entrySet().stream()
                                    .filter(e -> !"data".equals(e.getValue()))
                                    .toList() + "; requests by status " + statuses + "; " + logs());
        } finally {
            stop.set(true);
            for (Thread t : clients) t.join(Duration.ofSeconds(30));
        }
        assertThat(statuses.keySet()).as("router answers " + statuses).containsOnly(200);
    }

    /** "data" when the query returns at least one series with a finite value, else what it returned. */
    private String answer(int promPort, String promql) {
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + promPort + "/api/v1/query?query="
                                    + URLEncoder.encode(promql, StandardCharsets.UTF_8)))
                            .timeout(Duration.ofSeconds(5))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) return "HTTP " + r.statusCode() + ": " + r.body();
            for (JsonNode series :
                    Manifests.JSON.readTree(r.body()).path("data").path("result")) {
                String v = series.path("value").get(1).asText();
                if (!v.equals("NaN") && !v.contains("Inf")) return "data";
            }
            return "no finite sample: " + r.body();
        } catch (IOException e) {
            return "prometheus not answering: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Each panel target's expression, and each variable's label_values query as the PromQL it stands for, with
     * the variables filled in as Grafana does; a variable the test does not know fails here.
     */
    static Map<String, String> dashboardQueries() throws IOException {
        JsonNode dashboard = Manifests.JSON.readTree(
                Repo.root().resolve("deploy/grafana/patchbay-lora.json").toFile());
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode panel : dashboard.path("panels")) {
            if (panel.path("type").asText().equals("row")) continue;
            assertThat(panel.path("targets")).as(panel.path("title").asText()).isNotEmpty();
            for (JsonNode t : panel.path("targets")) {
                out.put(
                        panel.path("title").asText() + " " + t.path("refId").asText(),
                        fill(t.path("expr").asText()));
            }
        }
        Pattern labelValues = Pattern.compile("label_values\\((.+), (\\w+)\\)");
        for (JsonNode v : dashboard.path("templating").path("list")) {
            if (!v.path("type").asText().equals("query")) continue;
            Matcher lv = labelValues.matcher(v.path("query").path("query").asText());
            assertThat(lv.matches()).as("variable " + v.path("name")).isTrue();
            out.put(
                    "variable " + v.path("name").asText(),
                    fill("count by (" + lv.group(2) + ") (" + lv.group(1) + ")"));
        }
        return out;
    }

    private static String fill(String expr) {
        String filled = expr;
        for (var v : VARIABLES.entrySet()) filled = filled.replace(v.getKey(), v.getValue());
        assertThat(filled).as("unknown variable in " + expr).doesNotContain("$");
        return filled;
    }

    /** A pod's arguments on this machine: loopback, a free port, and the mounted paths moved to temp dirs. */
    private static List<String> remap(List<String> args, Map<String, String> paths) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if ((a.equals("--host") || a.equals("--port")) && i + 1 < args.size()) {
                out.add(a);
                out.add(a.equals("--host") ? "127.0.0.1" : "0");
                i++;
                continue;
            }
            for (var p : paths.entrySet()) {
                if (a.equals(p.getKey()) || a.startsWith(p.getKey() + "/"))
                    a = p.getValue() + a.substring(p.getKey().length());
            }
            out.add(a);
        }
        return out;
    }

    private Process launch(String name, List<String> args, Map<String, String> env) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "--add-modules",
                "jdk.incubator.vector",
                "-Xmx512m",
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName()));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve(name + ".log").toFile());
        pb.environment().putAll(env);
        // The pods' cache directory, moved here like the mounts.
        pb.environment()
                .computeIfPresent(
                        "XDG_CACHE_HOME", (k, v) -> dir.resolve(name + "-xdg").toString());
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    private int reportedPort(Process p, String name, Pattern pattern) {
        Path log = dir.resolve(name + ".log");
        return Await.value(name + " to report its port", () -> {
            try {
                Matcher matcher = pattern.matcher(Files.readString(log));
                if (matcher.find()) return Integer.parseInt(matcher.group(1));
            } catch (IOException e) {
                return null;
            }
            if (!p.isAlive()) throw new AssertionError(name + " exited with " + p.exitValue() + ": " + logs());
            return null;
        });
    }

    private HttpResponse<String> post(int port, String path, String body) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static void writeAdapter(Path dir, String name) throws IOException {
        PeftWriter.write(
                dir, SimModel.DEFAULT_CONFIG, "patchbay-sim", 8, 16, List.of("q_proj", "v_proj"), name.hashCode());
    }

    private String logs() {
        StringBuilder sb = new StringBuilder();
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".log")).toList()) {
                List<String> lines = Files.readAllLines(f);
                sb.append("\n--- ")
                        .append(f.getFileName())
                        .append(": ")
                        .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size())));
            }
        } catch (IOException e) {
            sb.append(e);
        }
        return sb.toString();
    }

    private static void write(Path file, String content) {
        try {
            Files.writeString(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterEach
    void stopProcesses() throws InterruptedException {
        for (Process p : processes) p.destroy();
        for (Process p : processes) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) p.destroyForcibly();
        }
    }
}
