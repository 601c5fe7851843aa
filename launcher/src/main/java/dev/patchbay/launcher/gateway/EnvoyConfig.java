package dev.patchbay.launcher.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * The Envoy configuration shipped in {@code deploy/envoy/envoy.yaml} (on the class path beside this class), read and
 * filled in for one gateway: where Envoy listens, where the picker is, the failure mode and the pool of model servers
 * (where the picker's choices go, and round robin under FailOpen while the picker does not answer). Everything else
 * stays as shipped, so what an operator reads in that file is what {@code patchbay gateway} runs. A second rendering
 * leaves the picker out: Envoy alone, round robin over the pool, the baseline a picker is compared with.
 */
public final class EnvoyConfig {
    static final String RESOURCE = "envoy.yaml";
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final String EXT_PROC_FILTER = "envoy.filters.http.ext_proc";
    private static final String POOL_CLUSTER = "pool";

    /** What the InferencePool's {@code endpointPickerRef.failureMode} says, and Envoy's ext_proc does with it. */
    public enum FailureMode {
        /** The picker does not answer: requests go on to the pool without it. */
        FAIL_OPEN("FailOpen"),
        /** The picker does not answer: requests get 503. */
        FAIL_CLOSE("FailClose");

        private final String inferencePoolName;

        FailureMode(String inferencePoolName) {
            this.inferencePoolName = inferencePoolName;
        }

        /** {@code FailOpen} or {@code FailClose}, as the InferencePool and the Helm chart spell them. */
        public String inferencePoolName() {
            return inferencePoolName;
        }

        public static FailureMode parse(String text) {
            for (FailureMode mode : values()) {
                if (mode.inferencePoolName.equalsIgnoreCase(text.trim())) {
                    return mode;
                }
            }
            throw new IllegalArgumentException("failure mode must be FailOpen or FailClose, got '" + text + "'");
        }
    }

    /** One picker replica: its ext_proc address (an IP literal) and the port of its gRPC health services. */
    public record Picker(Endpoint extProc, int healthPort) {}

    /**
     * One gateway's addresses.
     *
     * @param listenHost where Envoy takes client requests
     * @param listenPort its port (0: a free one, see {@link EnvoyProcess#listenerPort})
     * @param adminPort  Envoy's admin interface on 127.0.0.1 (0: a free one)
     * @param pickers    the picker's replicas (IP literals: Envoy's static clusters take no names); Envoy spreads
     *                   requests over them round robin, as a Kubernetes Service over the picker's pods
     * @param failureMode what Envoy does while no picker answers
     * @param pool       the model servers (IP literals): every endpoint a picker may name must be one
     */
    public record Gateway(
            String listenHost,
            int listenPort,
            int adminPort,
            List<Picker> pickers,
            FailureMode failureMode,
            List<Endpoint> pool) {
        public Gateway {
            pickers = List.copyOf(pickers);
            pool = List.copyOf(pool);
            if (pickers.isEmpty()) {
                throw new IllegalArgumentException("the gateway needs at least one picker");
            }
            if (pool.isEmpty()) {
                throw new IllegalArgumentException("the gateway needs at least one model server");
            }
        }

        /** One picker at {@code picker}, its gRPC health on {@code pickerHealthPort}. */
        public Gateway(
                String listenHost,
                int listenPort,
                int adminPort,
                Endpoint picker,
                int pickerHealthPort,
                FailureMode failureMode,
                List<Endpoint> pool) {
            this(listenHost, listenPort, adminPort, List.of(new Picker(picker, pickerHealthPort)), failureMode, pool);
        }
    }

    /**
     * Envoy without a picker: where it listens and the model servers it sends to round robin.
     *
     * @param listenPort 0: a free one, see {@link EnvoyProcess#listenerPort}
     * @param adminPort  on 127.0.0.1; 0: a free one
     * @param pool       the model servers (IP literals)
     */
    public record RoundRobin(String listenHost, int listenPort, int adminPort, List<Endpoint> pool) {
        public RoundRobin {
            pool = List.copyOf(pool);
            if (pool.isEmpty()) {
                throw new IllegalArgumentException("Envoy needs at least one model server");
            }
        }
    }

    private final JsonNode root;

    private EnvoyConfig(JsonNode root) {
        this.root = root;
    }

    /** The configuration as shipped. */
    public static EnvoyConfig shipped() {
        try (InputStream in = EnvoyConfig.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the class path beside " + EnvoyConfig.class);
            }
            return new EnvoyConfig(YAML.readTree(in));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the shipped Envoy configuration", e);
        }
    }

    /** The shipped configuration with {@code gateway}'s addresses, as YAML Envoy reads. */
    public static String render(Gateway gateway) {
        EnvoyConfig filled = withFrontDoor(gateway.adminPort(), gateway.listenHost(), gateway.listenPort());
        ObjectNode config = (ObjectNode) filled.root;
        ((ObjectNode) filled.extProc()).put("failure_mode_allow", gateway.failureMode() == FailureMode.FAIL_OPEN);

        ArrayNode pickerEndpoints = (ArrayNode) filled.pickerLbEndpoints();
        JsonNode shippedEndpoint = pickerEndpoints.get(0).deepCopy();
        pickerEndpoints.removeAll();
        for (Picker picker : gateway.pickers()) {
            ObjectNode lbEndpoint = shippedEndpoint.deepCopy();
            ObjectNode endpoint = (ObjectNode) lbEndpoint.path("endpoint");
            setAddress(
                    (ObjectNode) endpoint.path("address").path("socket_address"),
                    picker.extProc().host(),
                    picker.extProc().port());
            ((ObjectNode) endpoint.path("health_check_config")).put("port_value", picker.healthPort());
            pickerEndpoints.add(lbEndpoint);
        }

        filled.setPool(gateway.pool());
        return write(config);
    }

    /**
     * Envoy alone in front of the pool, for comparison with a picker: the shipped file without the picker (no ext_proc
     * filter, no picker cluster), every request going round robin over the {@code pool} cluster, whose connection
     * limits and retry policy stay as shipped so that the two paths differ only in how a server is chosen.
     */
    public static String render(RoundRobin gateway) {
        EnvoyConfig filled = withFrontDoor(gateway.adminPort(), gateway.listenHost(), gateway.listenPort());
        ObjectNode config = (ObjectNode) filled.root;
        removeIf(
                filled.connectionManager().path("http_filters"),
                f -> EXT_PROC_FILTER.equals(f.path("name").asText()));
        ObjectNode pool = (ObjectNode) filled.cluster(POOL_CLUSTER);
        pool.remove("load_balancing_policy");
        pool.put("lb_policy", "ROUND_ROBIN");
        removeIf(
                config.path("static_resources").path("clusters"),
                c -> "picker".equals(c.path("name").asText()));
        filled.setPool(gateway.pool());
        return write(config);
    }

    /** A copy of the shipped configuration with its admin and listener addresses set. */
    private static EnvoyConfig withFrontDoor(int adminPort, String listenHost, int listenPort) {
        ObjectNode config = shipped().root.deepCopy();
        EnvoyConfig filled = new EnvoyConfig(config);
        setAddress((ObjectNode) config.path("admin").path("address").path("socket_address"), "127.0.0.1", adminPort);
        setAddress((ObjectNode) filled.listener().path("address").path("socket_address"), listenHost, listenPort);
        return filled;
    }

    private void setPool(List<Endpoint> pool) {
        ArrayNode lbEndpoints = YAML.createArrayNode();
        for (Endpoint server : pool) {
            ObjectNode lbEndpoint = lbEndpoints.addObject();
            setAddress(
                    lbEndpoint.putObject("endpoint").putObject("address").putObject("socket_address"),
                    server.host(),
                    server.port());
        }
        ((ObjectNode) cluster(POOL_CLUSTER)
                        .path("load_assignment")
                        .path("endpoints")
                        .path(0))
                .set("lb_endpoints", lbEndpoints);
    }

    private static void removeIf(JsonNode list, Predicate<JsonNode> unwanted) {
        Iterator<JsonNode> items = list.elements();
        while (items.hasNext()) {
            if (unwanted.test(items.next())) {
                items.remove();
            }
        }
    }

    private static String write(JsonNode config) {
        try {
            return YAML.writeValueAsString(config);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void setAddress(ObjectNode socketAddress, String host, int port) {
        socketAddress.put("address", host).put("port_value", port);
    }

    /** The picker's ext_proc port, as shipped (the gateway's picker uses 9002). */
    public int pickerPort() {
        return pickerEndpoint()
                .path("address")
                .path("socket_address")
                .path("port_value")
                .asInt();
    }

    /** The port Envoy health-checks the picker on, as shipped (9003, the gateway picker's gRPC health port). */
    public int pickerHealthPort() {
        return pickerEndpoint().path("health_check_config").path("port_value").asInt();
    }

    /** The gRPC service name Envoy health-checks the picker with. */
    public String pickerHealthService() {
        return cluster("picker")
                .path("health_checks")
                .path(0)
                .path("grpc_health_check")
                .path("service_name")
                .asText();
    }

    public FailureMode failureMode() {
        return extProc().path("failure_mode_allow").asBoolean() ? FailureMode.FAIL_OPEN : FailureMode.FAIL_CLOSE;
    }

    /** The header whose {@code ip:port} list the pool's override_host load balancing sends to, first to last. */
    public String destinationHeader() {
        return overrideHost()
                .path("override_host_sources")
                .path(0)
                .path("header")
                .asText();
    }

    /**
     * Throws unless a picker that names {@code fallbacks} endpoints after its first choice works behind the shipped
     * file: every refusal but the last needs a retry.
     */
    public static void checkFallbacks(int fallbacks) {
        int retries = shipped().slotRefusalRetries();
        if (fallbacks < 0 || fallbacks > retries) {
            throw new IllegalArgumentException("--ext-proc-fallbacks must be 0 to " + retries + ", Envoy's retries in "
                    + RESOURCE + " (with more, the last endpoint named would refuse a request and no retry follow), "
                    + "got " + fallbacks);
        }
    }

    /** How many times Envoy retries a request a server refused for want of a slot: the picker's fallbacks at most. */
    public int slotRefusalRetries() {
        JsonNode retries = route().path("retry_policy");
        return retries.path("retry_on").asText().equals("retriable-headers")
                ? retries.path("num_retries").asInt()
                : 0;
    }

    /** The headers removed from a client's request before anything reads it. */
    public List<String> headersRemovedFromClients() {
        List<String> removed = new ArrayList<>();
        for (JsonNode extension : connectionManager().path("early_header_mutation_extensions")) {
            for (JsonNode mutation : extension.path("typed_config").path("mutations")) {
                if (mutation.has("remove")) {
                    removed.add(mutation.path("remove").asText().toLowerCase(Locale.ROOT));
                }
            }
        }
        return removed;
    }

    /** Each route's request timeout, in route order. */
    public List<Duration> routeTimeouts() {
        List<Duration> timeouts = new ArrayList<>();
        for (JsonNode host : connectionManager().path("route_config").path("virtual_hosts")) {
            for (JsonNode route : host.path("routes")) {
                timeouts.add(duration(route.path("route").path("timeout").asText()));
            }
        }
        return timeouts;
    }

    /** The processing mode of the ext_proc filter, field by field ({@code request_body_mode: FULL_DUPLEX_STREAMED}...). */
    public JsonNode processingMode() {
        return extProc().path("processing_mode");
    }

    /** Envoy's durations are written as seconds with an {@code s} ({@code 300s}, {@code 0.5s}). */
    static Duration duration(String text) {
        if (!text.endsWith("s")) {
            throw new IllegalArgumentException("not an Envoy duration: '" + text + "'");
        }
        return Duration.ofNanos(Math.round(Double.parseDouble(text.substring(0, text.length() - 1)) * 1e9));
    }

    private JsonNode listener() {
        return named(root.path("static_resources").path("listeners"), "gateway");
    }

    private JsonNode connectionManager() {
        return listener().path("filter_chains").path(0).path("filters").path(0).path("typed_config");
    }

    private JsonNode extProc() {
        return named(connectionManager().path("http_filters"), EXT_PROC_FILTER).path("typed_config");
    }

    private JsonNode cluster(String name) {
        return named(root.path("static_resources").path("clusters"), name);
    }

    private JsonNode overrideHost() {
        for (JsonNode policy :
                cluster(POOL_CLUSTER).path("load_balancing_policy").path("policies")) {
            JsonNode extension = policy.path("typed_extension_config");
            if (extension.path("name").asText().equals("envoy.load_balancing_policies.override_host")) {
                return extension.path("typed_config");
            }
        }
        throw new IllegalStateException("the pool cluster has no override_host load balancing policy");
    }

    private JsonNode route() {
        return connectionManager()
                .path("route_config")
                .path("virtual_hosts")
                .path(0)
                .path("routes")
                .path(0)
                .path("route");
    }

    /** The picker cluster's hosts: as shipped, one. */
    private JsonNode pickerLbEndpoints() {
        return cluster("picker")
                .path("load_assignment")
                .path("endpoints")
                .path(0)
                .path("lb_endpoints");
    }

    private JsonNode pickerEndpoint() {
        return pickerLbEndpoints().path(0).path("endpoint");
    }

    private static JsonNode named(JsonNode list, String name) {
        for (JsonNode item : list) {
            if (name.equals(item.path("name").asText())) {
                return item;
            }
        }
        throw new IllegalStateException("the Envoy configuration has no entry named '" + name + "'");
    }
}
