package dev.patchbay.launcher.field;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import dev.patchbay.router.pick.Endpoint;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * llm-d-router's endpoint picker ({@code epp}, built by {@code scripts/third-party.sh epp}) over a fixed list of model
 * servers, without Kubernetes: its {@code file-discovery} plugin reads the servers from a file this class writes, and
 * it scrapes each server's {@code /metrics} at the same address (every 50 ms, epp's default). It speaks ext_proc in
 * plaintext on its gRPC port, so an Envoy ({@link EnvoyFront#forPicker}) puts it in front of clients.
 */
public final class LlmdPicker implements AutoCloseable {
    /** The gRPC service Envoy health-checks a picker for (deploy/envoy/envoy.yaml), and this class waits for. */
    static final String EXT_PROC_SERVICE = "envoy.service.ext_proc.v3.ExternalProcessor";

    static final String POOL_NAME = "patchbay-field";
    static final String POOL_NAMESPACE = "local";
    static final Duration START_LIMIT = Duration.ofSeconds(60);
    /** epp's own default log verbosity; 4 adds each request's candidates, their scraped state and scores. */
    public static final int DEFAULT_VERBOSITY = 2;

    private static final ObjectMapper YAML =
            new ObjectMapper(new YAMLFactory().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER));
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    /** A scorer of a profile and its weight. */
    public record Scorer(String type, double weight) {}

    /** The scheduling profiles Patchbay runs epp with. */
    public enum Profile {
        /**
         * LoRA affinity with load: {@code lora-affinity-scorer}, {@code queue-scorer} and
         * {@code kv-cache-utilization-scorer} at weight 1 each, {@code max-score-picker}. llm-d documents no profile
         * for LoRA as such; the scorer's README ({@code pkg/epp/framework/plugins/scheduling/scorer/loraaffinity})
         * configures it at weight 1, and llm-d's integration tests ({@code test/integration/epp/testdata/
         * default-config.yaml}) run it at weight 1 beside these two load scorers (and {@code prefix-cache-scorer},
         * left out here so that what decides is where adapters run and how loaded servers are).
         */
        LORA(List.of(
                new Scorer("lora-affinity-scorer", 1),
                new Scorer("queue-scorer", 1),
                new Scorer("kv-cache-utilization-scorer", 1))),
        /**
         * What epp runs when given no configuration ({@code loadDefaultConfig} in {@code pkg/epp/config/loader/
         * defaults.go}): {@code queue-scorer} 2, {@code kv-cache-utilization-scorer} 2, {@code prefix-cache-scorer} 3
         * (fed by the approximate prefix producer epp adds for it), {@code max-score-picker}. Written out because
         * running without Kubernetes takes a configuration that names the discovery plugin.
         */
        /**
         * Patchbay's {@code gie-lora} profile in epp's terms: {@code queue-scorer} 2, {@code kv-cache-utilization-scorer}
         * 2, {@code lora-affinity-scorer} 3 (the gateway's default weights, lora-affinity in the place of prefix-cache),
         * so that the real scorer and Patchbay's copy of it can be run on the same stream with the same weights.
         */
        GIE_LORA(List.of(
                new Scorer("queue-scorer", 2),
                new Scorer("kv-cache-utilization-scorer", 2),
                new Scorer("lora-affinity-scorer", 3))),
        DEFAULT(List.of(
                new Scorer("queue-scorer", 2),
                new Scorer("kv-cache-utilization-scorer", 2),
                new Scorer("prefix-cache-scorer", 3)));

        private final List<Scorer> scorers;

        Profile(List<Scorer> scorers) {
            this.scorers = scorers;
        }

        public List<Scorer> scorers() {
            return scorers;
        }
    }

    /** epp's three ports; it listens on every interface (it takes no listen address). */
    public record Ports(int grpc, int health, int metrics) {
        static Ports free() throws IOException {
            return new Ports(FreePort.any(), FreePort.any(), FreePort.any());
        }
    }

    private final ChildProcess process;
    private final Profile profile;
    private final Ports ports;
    private final Path config;
    private final Path endpoints;
    private final List<Endpoint> servers;

    private LlmdPicker(
            ChildProcess process, Profile profile, Ports ports, Path config, Path endpoints, List<Endpoint> servers) {
        this.process = process;
        this.profile = profile;
        this.ports = ports;
        this.config = config;
        this.endpoints = endpoints;
        this.servers = servers;
    }

    /** Starts epp ({@link FieldTools#require}) on free ports at its default verbosity. */
    public static LlmdPicker start(Profile profile, List<Endpoint> servers, Path dir)
            throws IOException, InterruptedException {
        return start(FieldTools.require("llm-d-epp"), profile, servers, dir, DEFAULT_VERBOSITY);
    }

    /**
     * Starts {@code epp} with {@code profile} over {@code servers} (IPv4 literals: epp's file discovery takes no
     * names) on free loopback ports, writing its files and log ({@code epp.log}) into a new directory under
     * {@code dir}, and returns once its gRPC health port answers SERVING for the ext_proc service: its pool is loaded.
     */
    public static LlmdPicker start(Path epp, Profile profile, List<Endpoint> servers, Path dir, int verbosity)
            throws IOException, InterruptedException {
        List<Endpoint> pool = List.copyOf(servers);
        if (pool.isEmpty()) {
            throw new IllegalArgumentException("epp needs at least one model server");
        }
        Path home = Files.createTempDirectory(
                Files.createDirectories(dir), "llm-d-epp-" + profile.name().toLowerCase() + "-");
        Path endpointsFile = home.resolve("endpoints.yaml");
        Path configFile = home.resolve("config.yaml");
        Files.writeString(endpointsFile, endpointsYaml(pool));
        Files.writeString(configFile, configYaml(profile, endpointsFile));
        return FreePort.retryIfTaken(() -> {
            Ports ports = Ports.free();
            ChildProcess process = ChildProcess.start(
                    "llm-d epp (" + profile.name().toLowerCase() + ")",
                    command(epp, configFile, ports, verbosity),
                    home.resolve("epp.log"));
            try {
                process.awaitTrue(
                        "serve its gRPC health on " + ports.health(), START_LIMIT, () -> serving(ports.health()));
            } catch (IOException | InterruptedException | RuntimeException e) {
                process.close();
                throw e;
            }
            return new LlmdPicker(process, profile, ports, configFile, endpointsFile, pool);
        });
    }

    /** epp's command line: plaintext, the chosen ports, the pool's name and namespace. */
    public static List<String> command(Path epp, Path configFile, Ports ports, int verbosity) {
        return List.of(
                epp.toString(),
                "--pool-name",
                POOL_NAME,
                "--pool-namespace",
                POOL_NAMESPACE, // else it warns and labels its metrics with Kubernetes' "default"
                "--config-file",
                configFile.toString(),
                "--grpc-port",
                Integer.toString(ports.grpc()),
                "--grpc-health-port",
                Integer.toString(ports.health()),
                "--metrics-port",
                Integer.toString(ports.metrics()),
                // Secure serving (its default, also without Kubernetes) is a self-signed certificate Envoy would
                // have to be told to accept; Patchbay's envoy.yaml talks to its picker in plaintext.
                "--secure-serving=false",
                // Traces would go to its console exporter: output, and work, no other front does.
                "--tracing=false",
                "--v=" + verbosity);
    }

    /**
     * The file-discovery endpoints file: each server by its address as name, its IPv4 literal and its port (a
     * string, as the format wants).
     */
    public static String endpointsYaml(List<Endpoint> servers) {
        ObjectNode root = YAML.createObjectNode();
        ArrayNode list = root.putArray("endpoints");
        for (Endpoint server : servers) {
            if (!isIpv4Literal(server.host())) {
                throw new IllegalArgumentException(
                        "epp's file discovery takes IPv4 literals only, not '" + server.host() + "'");
            }
            list.addObject()
                    .put("name", server.address())
                    .put("address", server.host())
                    .put("port", Integer.toString(server.port()));
        }
        return write(root);
    }

    /**
     * The EndpointPickerConfig for {@code profile}: file discovery of {@code endpointsFile} (watched, so a test may
     * rewrite it), the profile's scorers and a max-score picker in one profile, and the data layer that scrapes the
     * servers: {@code metrics-data-source} with {@code core-metrics-extractor}, whose default mapping reads vLLM's
     * {@code vllm:num_requests_waiting}, {@code vllm:num_requests_running}, {@code vllm:kv_cache_usage_perc},
     * {@code vllm:lora_requests_info} and {@code vllm:cache_config_info}, all of which Patchbay's servers expose. epp
     * would add the same source, picker and profile handler by itself; they are written out to say what runs.
     */
    public static String configYaml(Profile profile, Path endpointsFile) {
        ObjectNode root = YAML.createObjectNode();
        root.put("apiVersion", "llm-d.ai/v1alpha1").put("kind", "EndpointPickerConfig");
        ArrayNode plugins = root.putArray("plugins");
        plugins.addObject()
                .put("name", "endpoints")
                .put("type", "file-discovery")
                .putObject("parameters")
                .put("path", endpointsFile.toAbsolutePath().toString())
                .put("watchFile", true);
        for (Scorer scorer : profile.scorers()) {
            plugins.addObject().put("type", scorer.type());
        }
        for (String type : List.of(
                "max-score-picker", "single-profile-handler", "metrics-data-source", "core-metrics-extractor")) {
            plugins.addObject().put("type", type);
        }
        ArrayNode refs = root.putArray("schedulingProfiles")
                .addObject()
                .put("name", "default")
                .putArray("plugins");
        for (Scorer scorer : profile.scorers()) {
            refs.addObject().put("pluginRef", scorer.type()).put("weight", scorer.weight());
        }
        refs.addObject().put("pluginRef", "max-score-picker");
        ObjectNode dataLayer = root.putObject("dataLayer");
        dataLayer.putObject("discovery").put("pluginRef", "endpoints");
        dataLayer
                .putArray("sources")
                .addObject()
                .put("pluginRef", "metrics-data-source")
                .putArray("extractors")
                .addObject()
                .put("pluginRef", "core-metrics-extractor");
        return write(root);
    }

    private static String write(ObjectNode root) {
        try {
            return YAML.writeValueAsString(root);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Four decimal octets: what epp's file discovery accepts (checked here, without a name lookup). */
    static boolean isIpv4Literal(String host) {
        if (!IPV4.matcher(host).matches()) {
            return false;
        }
        for (String octet : host.split("\\.")) {
            if (Integer.parseInt(octet) > 255) {
                return false;
            }
        }
        return true;
    }

    /** Whether epp's health port answers SERVING for the ext_proc service, as Envoy asks it. */
    static boolean serving(int healthPort) {
        ManagedChannel channel = Grpc.newChannelBuilderForAddress(
                        "127.0.0.1", healthPort, InsecureChannelCredentials.create())
                .build();
        try {
            return HealthGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(1, TimeUnit.SECONDS)
                            .check(HealthCheckRequest.newBuilder()
                                    .setService(EXT_PROC_SERVICE)
                                    .build())
                            .getStatus()
                    == HealthCheckResponse.ServingStatus.SERVING;
        } finally {
            channel.shutdownNow();
        }
    }

    public Profile profile() {
        return profile;
    }

    /** Where Envoy's ext_proc filter reaches it. */
    public Endpoint extProc() {
        return new Endpoint("127.0.0.1", ports.grpc());
    }

    public Ports ports() {
        return ports;
    }

    public List<Endpoint> servers() {
        return servers;
    }

    public Path configFile() {
        return config;
    }

    public Path endpointsFile() {
        return endpoints;
    }

    public ChildProcess process() {
        return process;
    }

    /** Its own Prometheus page ({@code llm_d_epp_*}, {@code inference_pool_*}; refreshed every 5 s). */
    public String metrics() throws IOException, InterruptedException {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ports.metrics() + "/metrics"))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException("epp's /metrics answered " + r.statusCode());
            }
            return r.body();
        }
    }

    @Override
    public void close() {
        process.close();
    }
}
