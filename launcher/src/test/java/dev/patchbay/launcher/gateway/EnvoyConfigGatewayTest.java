package dev.patchbay.launcher.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.patchbay.router.pick.Endpoint;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** deploy/envoy/envoy.yaml filled in for a gateway: its picker replicas, and the fallbacks its retries allow. */
class EnvoyConfigGatewayTest {
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final List<Endpoint> POOL = List.of(new Endpoint("127.0.0.1", 18101), new Endpoint("127.0.0.1", 18102));

    @Test
    void everyPickerReplicaIsAHostOfThePickerClusterHealthCheckedOnItsOwnPort() throws Exception {
        List<EnvoyConfig.Picker> pickers = List.of(
                new EnvoyConfig.Picker(new Endpoint("127.0.0.1", 9102), 9103),
                new EnvoyConfig.Picker(new Endpoint("127.0.0.1", 9202), 9203));
        JsonNode config = YAML.readTree(EnvoyConfig.render(
                new EnvoyConfig.Gateway("127.0.0.1", 0, 0, pickers, EnvoyConfig.FailureMode.FAIL_OPEN, POOL)));

        JsonNode picker = null;
        for (JsonNode cluster : config.path("static_resources").path("clusters")) {
            if (cluster.path("name").asText().equals("picker")) {
                picker = cluster;
            }
        }
        assertThat(picker).isNotNull();
        List<String> hosts = new ArrayList<>();
        for (JsonNode lb :
                picker.path("load_assignment").path("endpoints").path(0).path("lb_endpoints")) {
            JsonNode endpoint = lb.path("endpoint");
            JsonNode socket = endpoint.path("address").path("socket_address");
            hosts.add(socket.path("address").asText() + ":"
                    + socket.path("port_value").asInt() + " health "
                    + endpoint.path("health_check_config").path("port_value").asInt());
        }
        assertThat(hosts).containsExactly("127.0.0.1:9102 health 9103", "127.0.0.1:9202 health 9203");
    }

    @Test
    void fallbacksAreAllowedUpToEnvoysRetriesOnASlotRefusal() {
        int retries = EnvoyConfig.shipped().slotRefusalRetries();
        assertThat(retries).isPositive();
        EnvoyConfig.checkFallbacks(0);
        EnvoyConfig.checkFallbacks(retries);
        assertThatThrownBy(() -> EnvoyConfig.checkFallbacks(retries + 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--ext-proc-fallbacks must be 0 to " + retries);
        assertThatThrownBy(() -> EnvoyConfig.checkFallbacks(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
