package dev.patchbay.launcher.field;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.patchbay.router.pick.Endpoint;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The files epp is started with, read back as epp reads them (YAML). */
class LlmdPickerConfigTest {
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @Test
    void theEndpointsFileNamesEachServerByAddressWithItsPortAsAString() throws Exception {
        JsonNode file = YAML.readTree(
                LlmdPicker.endpointsYaml(List.of(new Endpoint("127.0.0.1", 18101), new Endpoint("10.0.0.7", 8000))));

        assertThat(file.path("endpoints")).hasSize(2);
        JsonNode second = file.path("endpoints").path(1);
        assertThat(second.path("name").asText()).isEqualTo("10.0.0.7:8000");
        assertThat(second.path("address").asText()).isEqualTo("10.0.0.7");
        assertThat(second.path("port").isTextual())
                .as("the format wants the port as a string")
                .isTrue();
        assertThat(second.path("port").asText()).isEqualTo("8000");
    }

    @Test
    void aServerNamedByHostnameOrIpv6IsRefusedBeforeEppWouldBe() {
        for (String host : List.of("localhost", "::1", "300.1.1.1", "10.0.0")) {
            assertThatThrownBy(() -> LlmdPicker.endpointsYaml(List.of(new Endpoint(host, 8000))))
                    .as(host)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("IPv4");
        }
    }

    @Test
    void theLoraProfileScoresAdapterAffinityQueueAndKvCacheAtWeightOne() throws Exception {
        JsonNode config = config(LlmdPicker.Profile.LORA);

        assertThat(weights(config))
                .containsExactly(
                        Map.entry("lora-affinity-scorer", 1.0),
                        Map.entry("queue-scorer", 1.0),
                        Map.entry("kv-cache-utilization-scorer", 1.0),
                        Map.entry("max-score-picker", 0.0));
        assertCommonParts(config);
    }

    @Test
    void theDefaultProfileIsEppsOwnDefault() throws Exception {
        JsonNode config = config(LlmdPicker.Profile.DEFAULT);

        assertThat(weights(config))
                .containsExactly(
                        Map.entry("queue-scorer", 2.0),
                        Map.entry("kv-cache-utilization-scorer", 2.0),
                        Map.entry("prefix-cache-scorer", 3.0),
                        Map.entry("max-score-picker", 0.0));
        assertThat(pluginTypes(config)).doesNotContain("lora-affinity-scorer");
        assertCommonParts(config);
    }

    @Test
    void eppRunsPlaintextOnTheChosenPortsWithTheConfig() {
        List<String> command = LlmdPicker.command(
                Path.of("/x/llm-d-epp"), Path.of("/x/config.yaml"), new LlmdPicker.Ports(9102, 9103, 9190), 2);

        assertThat(command.getFirst()).isEqualTo("/x/llm-d-epp");
        assertThat(String.join(" ", command))
                .contains("--config-file /x/config.yaml")
                .contains("--grpc-port 9102")
                .contains("--grpc-health-port 9103")
                .contains("--metrics-port 9190")
                .contains("--pool-name patchbay-field")
                .contains("--pool-namespace local")
                .contains("--secure-serving=false");
    }

    /** Discovery from the endpoints file, and the data layer that scrapes the servers' vLLM metrics. */
    private static void assertCommonParts(JsonNode config) {
        assertThat(config.path("apiVersion").asText()).isEqualTo("llm-d.ai/v1alpha1");
        assertThat(config.path("kind").asText()).isEqualTo("EndpointPickerConfig");
        JsonNode discovery = plugin(
                config,
                config.path("dataLayer").path("discovery").path("pluginRef").asText());
        assertThat(discovery.path("type").asText()).isEqualTo("file-discovery");
        assertThat(discovery.path("parameters").path("path").asText()).isEqualTo("/tmp/pool/endpoints.yaml");
        assertThat(discovery.path("parameters").path("watchFile").asBoolean()).isTrue();
        JsonNode source = config.path("dataLayer").path("sources").path(0);
        assertThat(source.path("pluginRef").asText()).isEqualTo("metrics-data-source");
        assertThat(source.path("extractors").path(0).path("pluginRef").asText()).isEqualTo("core-metrics-extractor");
        assertThat(pluginTypes(config))
                .contains("metrics-data-source", "core-metrics-extractor", "single-profile-handler");
        // Every reference names a declared plugin (by type, its default name).
        for (JsonNode ref : config.path("schedulingProfiles").path(0).path("plugins")) {
            assertThat(pluginTypes(config)).contains(ref.path("pluginRef").asText());
        }
        assertThat(config.path("schedulingProfiles")).hasSize(1);
    }

    private static JsonNode config(LlmdPicker.Profile profile) throws Exception {
        return YAML.readTree(LlmdPicker.configYaml(profile, Path.of("/tmp/pool/endpoints.yaml")));
    }

    /** Each profile plugin with its weight (0 for the picker, which has none). */
    private static Map<String, Double> weights(JsonNode config) {
        Map<String, Double> weights = new LinkedHashMap<>();
        for (JsonNode ref : config.path("schedulingProfiles").path(0).path("plugins")) {
            weights.put(ref.path("pluginRef").asText(), ref.path("weight").asDouble(0));
        }
        return weights;
    }

    private static List<String> pluginTypes(JsonNode config) {
        List<String> types = new ArrayList<>();
        for (JsonNode plugin : config.path("plugins")) {
            types.add(
                    plugin.has("name")
                            ? plugin.path("name").asText()
                            : plugin.path("type").asText());
        }
        return types;
    }

    private static JsonNode plugin(JsonNode config, String name) {
        for (JsonNode plugin : config.path("plugins")) {
            if (name.equals(plugin.path("name").asText())) {
                return plugin;
            }
        }
        throw new AssertionError("no plugin named " + name);
    }
}
