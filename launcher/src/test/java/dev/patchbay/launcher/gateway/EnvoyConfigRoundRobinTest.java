package dev.patchbay.launcher.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.patchbay.router.pick.Endpoint;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** deploy/envoy/envoy.yaml rendered without its picker: Envoy alone, round robin over the pool. */
class EnvoyConfigRoundRobinTest {
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final List<Endpoint> POOL = List.of(new Endpoint("127.0.0.1", 18101), new Endpoint("127.0.0.1", 18102));

    @Test
    void everyRequestGoesRoundRobinOverThePoolWithNoPickerLeft() throws Exception {
        JsonNode config = YAML.readTree(EnvoyConfig.render(new EnvoyConfig.RoundRobin("127.0.0.1", 0, 0, POOL)));
        JsonNode manager = config.path("static_resources")
                .path("listeners")
                .path(0)
                .path("filter_chains")
                .path(0)
                .path("filters")
                .path(0)
                .path("typed_config");

        assertThat(names(manager.path("http_filters"))).containsExactly("envoy.filters.http.router");
        JsonNode routes =
                manager.path("route_config").path("virtual_hosts").path(0).path("routes");
        assertThat(routes).hasSize(1);
        assertThat(routes.path(0).path("match").has("headers")).isFalse();
        assertThat(routes.path(0).path("route").path("cluster").asText()).isEqualTo("pool");
        assertThat(routes.path(0).path("route").path("timeout").asText()).isEqualTo("300s");

        JsonNode clusters = config.path("static_resources").path("clusters");
        assertThat(names(clusters)).containsExactly("pool");
        JsonNode pool = clusters.path(0);
        assertThat(pool.path("lb_policy").asText()).isEqualTo("ROUND_ROBIN");
        assertThat(pool.has("load_balancing_policy"))
                .as("no override_host: no header picks a server")
                .isFalse();
        List<String> addresses = new ArrayList<>();
        for (JsonNode lb :
                pool.path("load_assignment").path("endpoints").path(0).path("lb_endpoints")) {
            JsonNode socket = lb.path("endpoint").path("address").path("socket_address");
            addresses.add(socket.path("address").asText() + ":"
                    + socket.path("port_value").asInt());
        }
        assertThat(addresses).containsExactly("127.0.0.1:18101", "127.0.0.1:18102");
        assertThat(pool.path("circuit_breakers")
                        .path("thresholds")
                        .path(0)
                        .path("max_requests")
                        .asInt())
                .as("the shipped limits, not Envoy's default of 1024")
                .isEqualTo(40000);
        assertThat(config.path("admin")
                        .path("address")
                        .path("socket_address")
                        .path("port_value")
                        .asInt())
                .isZero();
    }

    @Test
    void theShippedFileKeepsItsPicker() throws Exception {
        // The round-robin rendering works on a copy.
        EnvoyConfig.render(new EnvoyConfig.RoundRobin("127.0.0.1", 0, 0, POOL));
        JsonNode shipped = YAML.readTree(EnvoyConfig.render(new EnvoyConfig.Gateway(
                "127.0.0.1", 0, 0, new Endpoint("127.0.0.1", 9002), 9003, EnvoyConfig.FailureMode.FAIL_CLOSE, POOL)));
        JsonNode clusters = shipped.path("static_resources").path("clusters");
        assertThat(names(clusters)).containsExactly("picker", "pool");
        assertThat(clusters.path(1)
                        .path("load_balancing_policy")
                        .path("policies")
                        .path(0)
                        .path("typed_extension_config")
                        .path("name")
                        .asText())
                .isEqualTo("envoy.load_balancing_policies.override_host");
    }

    private static List<String> names(JsonNode list) {
        List<String> names = new ArrayList<>();
        list.forEach(item -> names.add(item.path("name").asText()));
        return names;
    }
}
