package dev.patchbay.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.launcher.gateway.EnvoyConfig;
import dev.patchbay.launcher.gateway.GatewayCommand;
import dev.patchbay.router.proxy.ProxyHandler;
import java.time.Duration;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The gateway path has three descriptions that must agree: the Helm chart's (an InferencePool whose picker is the
 * router, and an HTTPRoute to it), the Envoy configuration in {@code deploy/envoy/envoy.yaml}, and
 * {@code patchbay gateway}'s defaults. Each setting both sides name is compared: the picker's ports, the failure
 * mode, the request timeout and the destination header.
 */
class GatewaySettingsAgreeTest {
    private final EnvoyConfig envoy = EnvoyConfig.shipped();

    private static JsonNode chart(String kind, String name) throws Exception {
        return Manifests.check(Tools.helmTemplate(Cases.GATEWAY_PICKER.helmArgs()))
                .one(kind, name);
    }

    private static String gatewayDefault(String option) {
        return new CommandLine(new GatewayCommand())
                .getCommandSpec()
                .findOption(option)
                .defaultValue();
    }

    @Test
    void thePickersPortsAgree() throws Exception {
        JsonNode router = Manifests.container(chart("Deployment", "patchbay-router"), "router");
        int extProcPort = Integer.parseInt(DeployManifestsTest.argAfter(router, "--ext-proc-port"));
        int healthPort = Integer.parseInt(DeployManifestsTest.argAfter(router, "--grpc-health-port"));
        JsonNode pickerRef = chart("InferencePool", "patchbay").path("spec").path("endpointPickerRef");

        assertThat(envoy.pickerPort())
                .isEqualTo(extProcPort)
                .isEqualTo(pickerRef.path("port").path("number").asInt())
                .isEqualTo(Integer.parseInt(gatewayDefault("--ext-proc-port")));
        assertThat(envoy.pickerHealthPort())
                .isEqualTo(healthPort)
                .isEqualTo(Integer.parseInt(gatewayDefault("--grpc-health-port")));
        assertThat(router.path("readinessProbe").path("grpc").path("port").asInt())
                .isEqualTo(healthPort);
        assertThat(envoy.pickerHealthService()).isEqualTo("envoy.service.ext_proc.v3.ExternalProcessor");
    }

    @Test
    void theFailureModeAgrees() throws Exception {
        String chartMode = chart("InferencePool", "patchbay")
                .path("spec")
                .path("endpointPickerRef")
                .path("failureMode")
                .asText();
        assertThat(envoy.failureMode().inferencePoolName())
                .isEqualTo(chartMode)
                .isEqualTo(EnvoyConfig.FailureMode.parse(gatewayDefault("--failure-mode"))
                        .inferencePoolName());
    }

    @Test
    void theRequestTimeoutAgrees() throws Exception {
        String chartTimeout = chart("HTTPRoute", "patchbay")
                .path("spec")
                .path("rules")
                .get(0)
                .path("timeouts")
                .path("request")
                .asText();
        assertThat(envoy.routeTimeouts())
                .isNotEmpty()
                .allSatisfy(t -> assertThat(t).isEqualTo(gatewayApi(chartTimeout)));
    }

    @Test
    void theDestinationHeaderIsTheOneThePickerWritesAndClientsCannotSetIt() {
        assertThat(envoy.destinationHeader()).isEqualTo(ProxyHandler.DESTINATION_HEADER);
        assertThat(envoy.headersRemovedFromClients()).contains(ProxyHandler.DESTINATION_HEADER);
    }

    @Test
    void bodiesStreamBothWaysAsTheGatewaysReferenceConfigurationHasThem() {
        JsonNode mode = envoy.processingMode();
        assertThat(mode.path("request_body_mode").asText()).isEqualTo("FULL_DUPLEX_STREAMED");
        assertThat(mode.path("response_body_mode").asText()).isEqualTo("FULL_DUPLEX_STREAMED");
        assertThat(mode.path("request_trailer_mode").asText()).isEqualTo("SEND");
        assertThat(mode.path("response_trailer_mode").asText()).isEqualTo("SEND");
    }

    /** A Gateway API duration: whole hours, minutes, seconds and milliseconds ({@code 300s}, {@code 1h30m}). */
    static Duration gatewayApi(String text) {
        Duration total = Duration.ZERO;
        var m = Pattern.compile("(\\d+)(ms|h|m|s)").matcher(text);
        int end = 0;
        while (m.find()) {
            assertThat(m.start()).as("a Gateway API duration: " + text).isEqualTo(end);
            long n = Long.parseLong(m.group(1));
            total = total.plus(
                    switch (m.group(2)) {
                        case "h" -> Duration.ofHours(n);
                        case "m" -> Duration.ofMinutes(n);
                        case "s" -> Duration.ofSeconds(n);
                        default -> Duration.ofMillis(n);
                    });
            end = m.end();
        }
        assertThat(end)
                .as("a Gateway API duration: " + text)
                .isEqualTo(text.length())
                .isPositive();
        return total;
    }
}
