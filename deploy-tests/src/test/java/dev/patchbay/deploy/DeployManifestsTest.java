package dev.patchbay.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.PatchbayVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The Helm chart renders, with every value set, objects that meet their schemas, wired to each other. */
class DeployManifestsTest {

    static List<Cases.Case> cases() {
        return Cases.all();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void everyRenderedObjectMeetsItsSchema(Cases.Case c) throws Exception {
        Manifests m = Manifests.check(Tools.helmTemplate(c.helmArgs()));
        assertThat(m.objects()).isNotEmpty();
        assertThat(m.allErrors()).as("schema errors").isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void chartPassesHelmLint(Cases.Case c) throws Exception {
        List<String> command = new ArrayList<>(List.of(
                Tools.helm().toString(), "lint", "--strict", Repo.chart().toString()));
        command.addAll(c.helmArgs());
        Tools.Result r = Tools.run(command, Repo.root(), Map.of());
        assertThat(r.exitCode()).as(r.stdout() + r.stderr()).isZero();
    }

    @Test
    void eachWayRendersItsObjects() throws Exception {
        assertThat(kinds(Cases.SINGLE_SERVER))
                .containsExactlyInAnyOrder("Deployment/patchbay-server", "Service/patchbay-server");
        List<String> router = List.of(
                "Deployment/patchbay-server",
                "Service/patchbay-server",
                "Deployment/patchbay-router",
                "Service/patchbay-router",
                "ConfigMap/patchbay-router",
                "ServiceAccount/patchbay-router",
                "Role/patchbay-router",
                "RoleBinding/patchbay-router");
        assertThat(kinds(Cases.ROUTER_PROXY)).containsExactlyInAnyOrderElementsOf(router);
        List<String> picker = new ArrayList<>(router);
        picker.addAll(List.of("InferencePool/patchbay", "HTTPRoute/patchbay"));
        assertThat(kinds(Cases.GATEWAY_PICKER)).containsExactlyInAnyOrderElementsOf(picker);
        assertThat(kinds(Cases.EVERYTHING))
                .contains("ServiceMonitor/patchbay-server", "ServiceMonitor/patchbay-router");
    }

    /** deploy/kubernetes/ is the chart rendered for each way (deploy/render-manifests.sh), not a copy that drifts. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.patchbay.deploy.Cases#examples")
    void plainManifestsAreTheChartRendered(Cases.Case c) throws Exception {
        Path file = Repo.root().resolve("deploy/kubernetes/" + c.name() + ".yaml");
        String withoutHeader = Files.readString(file)
                .lines()
                .dropWhile(l -> l.startsWith("# "))
                .reduce("", (a, b) -> a + b + "\n");
        assertThat(withoutHeader)
                .as(file + " is stale: run deploy/render-manifests.sh")
                .isEqualTo(Tools.helmTemplate(c.helmArgs()));
        assertThat(Manifests.check(Files.readString(file)).allErrors()).isEmpty();
    }

    @Test
    void plainServiceMonitorsAreTheChartRendered() throws Exception {
        Path file = Repo.root().resolve("deploy/kubernetes/servicemonitors.yaml");
        String withoutHeader = Files.readString(file)
                .lines()
                .dropWhile(l -> l.startsWith("# "))
                .reduce("", (a, b) -> a + b + "\n");
        assertThat(withoutHeader)
                .as(file + " is stale: run deploy/render-manifests.sh")
                .isEqualTo(Tools.helmTemplate(List.of(
                        "--set",
                        "monitoring.prometheus.enabled=true",
                        "--show-only",
                        "templates/servicemonitor.yaml")));
        Manifests m = Manifests.check(Files.readString(file));
        assertThat(m.ofKind("ServiceMonitor")).hasSize(2);
        assertThat(m.allErrors()).isEmpty();
    }

    /** The gateway finds the servers and the picker only through these names, labels and ports. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("pickerCases")
    void inferencePoolSelectsTheServersAndNamesTheRoutersExtProcPort(Cases.Case c) throws Exception {
        Manifests m = Manifests.check(Tools.helmTemplate(c.helmArgs()));
        JsonNode pool = m.ofKind("InferencePool").getFirst();
        JsonNode server = m.one("Deployment", "patchbay-server");
        JsonNode serverPod = server.path("spec").path("template");
        Map<String, String> podLabels =
                Manifests.JSON.convertValue(serverPod.path("metadata").path("labels"), Map.class);
        Map<String, String> selector =
                Manifests.JSON.convertValue(pool.path("spec").path("selector").path("matchLabels"), Map.class);
        assertThat(podLabels).containsAllEntriesOf(selector);
        // The router's own pods must not join the pool.
        Map<String, String> routerLabels = Manifests.JSON.convertValue(
                m.one("Deployment", "patchbay-router")
                        .path("spec")
                        .path("template")
                        .path("metadata")
                        .path("labels"),
                Map.class);
        assertThat(routerLabels.entrySet().containsAll(selector.entrySet()))
                .as("router pods match the pool selector")
                .isFalse();

        JsonNode serve = Manifests.container(server, "server");
        int targetPort =
                pool.path("spec").path("targetPorts").get(0).path("number").asInt();
        assertThat(argAfter(serve, "--port")).isEqualTo(Integer.toString(targetPort));
        assertThat(serve.path("ports").get(0).path("containerPort").asInt()).isEqualTo(targetPort);

        JsonNode ref = pool.path("spec").path("endpointPickerRef");
        JsonNode service = m.one("Service", ref.path("name").asText());
        int pickerPort = ref.path("port").path("number").asInt();
        JsonNode servicePort = null;
        for (JsonNode p : service.path("spec").path("ports")) {
            if (p.path("port").asInt() == pickerPort) servicePort = p;
        }
        assertThat(servicePort).as("router Service port " + pickerPort).isNotNull();
        assertThat(servicePort.path("appProtocol").asText()).isEqualTo("kubernetes.io/h2c");
        JsonNode route = Manifests.container(m.one("Deployment", "patchbay-router"), "router");
        JsonNode containerPort = null;
        for (JsonNode p : route.path("ports")) {
            if (p.path("name").asText().equals(servicePort.path("targetPort").asText())) containerPort = p;
        }
        assertThat(containerPort)
                .as("router container port " + servicePort.path("targetPort"))
                .isNotNull();
        assertThat(argAfter(route, "--ext-proc-port"))
                .isEqualTo(containerPort.path("containerPort").asText());
        // The probes go to the gRPC health services' own port, which the container exposes.
        String healthPort = argAfter(route, "--grpc-health-port");
        assertThat(route.path("readinessProbe").path("grpc").path("port").asText())
                .isEqualTo(healthPort);
        assertThat(route.path("livenessProbe").path("grpc").path("port").asText())
                .isEqualTo(healthPort);
        assertThat(route.path("ports").findValuesAsText("containerPort")).contains(healthPort);

        Map<String, String> discoveryEnv =
                Manifests.env(Manifests.container(m.one("Deployment", "patchbay-router"), "discovery"));
        assertThat(discoveryEnv.get("POOL_SELECTOR")).isEqualTo(selectorString(selector));
        assertThat(discoveryEnv.get("POOL_PORTS")).isEqualTo(Integer.toString(targetPort));
    }

    static List<Cases.Case> pickerCases() {
        return List.of(Cases.GATEWAY_PICKER, Cases.EVERYTHING);
    }

    @Test
    void httpRouteSendsTheGatewaysTrafficToThePool() throws Exception {
        Manifests m = Manifests.check(Tools.helmTemplate(Cases.GATEWAY_PICKER.helmArgs()));
        JsonNode backend = m.one("HTTPRoute", "patchbay")
                .path("spec")
                .path("rules")
                .get(0)
                .path("backendRefs")
                .get(0);
        assertThat(backend.path("group").asText()).isEqualTo("inference.networking.k8s.io");
        assertThat(backend.path("kind").asText()).isEqualTo("InferencePool");
        assertThat(m.find("InferencePool", backend.path("name").asText())).isPresent();
    }

    @Test
    void serverPodsAnnounceTheirMetricsToPrometheus() throws Exception {
        Manifests m = Manifests.check(Tools.helmTemplate(Cases.ROUTER_PROXY.helmArgs()));
        for (String name : List.of("patchbay-server", "patchbay-router")) {
            JsonNode template = m.one("Deployment", name).path("spec").path("template");
            JsonNode annotations = template.path("metadata").path("annotations");
            assertThat(annotations.path("prometheus.io/scrape").asText()).isEqualTo("true");
            assertThat(annotations.path("prometheus.io/path").asText()).isEqualTo("/metrics");
            String port = annotations.path("prometheus.io/port").asText();
            assertThat(template.path("spec")
                            .path("containers")
                            .get(0)
                            .path("ports")
                            .findValuesAsText("containerPort"))
                    .contains(port);
        }
        JsonNode serverReady = Manifests.container(m.one("Deployment", "patchbay-server"), "server")
                .path("readinessProbe");
        assertThat(serverReady.path("httpGet").path("path").asText()).isEqualTo("/health");
    }

    /**
     * A rollout starts the new router before stopping the old, whether one replica runs or several, and the new one
     * gets traffic once it has scraped every server.
     */
    @Test
    void routerRolloutsKeepARouterThatHasSeenTheFleetServing() throws Exception {
        for (String replicas : List.of("1", "3")) {
            List<String> args = new ArrayList<>(Cases.ROUTER_PROXY.helmArgs());
            args.addAll(List.of("--set", "epp.replicas=" + replicas));
            JsonNode router = Manifests.check(Tools.helmTemplate(args)).one("Deployment", "patchbay-router");
            JsonNode container = Manifests.container(router, "router");
            assertThat(container
                            .path("readinessProbe")
                            .path("httpGet")
                            .path("path")
                            .asText())
                    .isEqualTo("/ready");
            assertThat(container
                            .path("livenessProbe")
                            .path("httpGet")
                            .path("path")
                            .asText())
                    .isEqualTo("/health");
            JsonNode spec = router.path("spec");
            assertThat(spec.path("replicas").asInt()).isEqualTo(Integer.parseInt(replicas));
            assertThat(spec.path("strategy").path("type").asText()).isEqualTo("RollingUpdate");
            assertThat(spec.path("strategy")
                            .path("rollingUpdate")
                            .path("maxUnavailable")
                            .asInt())
                    .isZero();
        }
    }

    /** The checks must be able to fail: each of these objects breaks one rule of its schema. */
    @Test
    void brokenObjectsAreRejected() throws Exception {
        String deployment = """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: %s}
                spec:
                  selector: {matchLabels: {a: b}}
                  template:
                    metadata: {labels: {a: b}}
                    spec:
                      containers: [%s]
                """;
        String pool = """
                apiVersion: inference.networking.k8s.io/v1
                kind: InferencePool
                metadata: {name: %s}
                spec:
                  selector: {matchLabels: {a: b}}
                  targetPorts: %s
                  endpointPickerRef: %s
                """;
        Map<String, String> broken = new LinkedHashMap<>();
        broken.put(
                "misspelled-field", deployment.formatted("misspelled-field", "{name: c, image: x, readinesProbe: {}}"));
        broken.put(
                "port-not-a-number",
                deployment.formatted("port-not-a-number", "{name: c, image: x, ports: [{containerPort: http}]}"));
        broken.put(
                "env-value-boolean",
                deployment.formatted("env-value-boolean", "{name: c, image: x, env: [{name: A, value: yes}]}"));
        broken.put("container-without-name", deployment.formatted("container-without-name", "{image: x}"));
        broken.put(
                "duplicate-target-ports",
                pool.formatted(
                        "duplicate-target-ports",
                        "[{number: 8000}, {number: 8000}]",
                        "{name: r, port: {number: 9002}}"));
        broken.put(
                "picker-service-without-port",
                pool.formatted("picker-service-without-port", "[{number: 8000}]", "{name: r}"));
        broken.put(
                "unknown-failure-mode",
                pool.formatted(
                        "unknown-failure-mode",
                        "[{number: 8000}]",
                        "{name: r, port: {number: 9002}, failureMode: Open}"));
        broken.put(
                "unknown-pool-field",
                pool.formatted(
                        "unknown-pool-field",
                        "[{number: 8000}]",
                        "{name: r, port: {number: 9002}, failMode: FailOpen}"));
        broken.put(
                "nine-target-ports",
                pool.formatted(
                        "nine-target-ports",
                        "[{number: 1}, {number: 2}, {number: 3}, {number: 4}, {number: 5}, {number: 6}, {number: 7}, {number: 8}, {number: 9}]",
                        "{name: r, port: {number: 9002}}"));
        broken.put("unknown-kind", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: unknown-kind}\n");
        broken.put("service-monitor-endpoints-not-a-list", """
                apiVersion: monitoring.coreos.com/v1
                kind: ServiceMonitor
                metadata: {name: service-monitor-endpoints-not-a-list}
                spec: {selector: {}, endpoints: {port: http}}
                """);
        Manifests m = Manifests.check(String.join("---\n", broken.values()));
        for (String name : broken.keySet()) {
            JsonNode object = m.objects().stream()
                    .filter(o -> o.path("metadata").path("name").asText().equals(name))
                    .findFirst()
                    .orElseThrow();
            assertThat(m.errors().get(object)).as(name).isNotEmpty();
        }
        // And the same objects made right pass, so the errors above are the broken rules and not the harness.
        Manifests fixed = Manifests.check(String.join(
                "---\n",
                deployment.formatted(
                        "ok-deployment",
                        "{name: c, image: x, readinessProbe: {httpGet: {path: /health, port: 8000}}, env: [{name: A, value: 'yes'}]}"),
                pool.formatted(
                        "ok-pool",
                        "[{number: 8000}, {number: 8001}]",
                        "{name: r, port: {number: 9002}, failureMode: FailOpen}")));
        assertThat(fixed.allErrors()).isEmpty();
    }

    /** The version is declared once, in the build: the chart's version and appVersion follow it. */
    @Test
    void theChartCarriesTheBuildsVersion() throws Exception {
        String chart = Files.readString(Repo.chart().resolve("Chart.yaml"));
        assertThat(chart)
                .containsPattern("(?m)^version: " + Pattern.quote(PatchbayVersion.VERSION) + "$")
                .containsPattern("(?m)^appVersion: \"" + Pattern.quote(PatchbayVersion.VERSION) + "\"$");
    }

    @Test
    void chartRefusesValuesItCannotServe() throws Exception {
        assertThat(helmError("--set-json", "modelServers.targetPorts=[{\"number\":8000},{\"number\":8001}]"))
                .contains("exactly one entry");
        assertThat(helmError("--set", "inferencePool.create=true", "--set", "inferencePool.failureMode=Open"))
                .contains("FailOpen or FailClose");
        assertThat(helmError("--set", "inferencePool.create=true", "--set", "epp.enabled=false"))
                .contains("needs epp.enabled");
        assertThat(helmError("--set", "httpRoute.create=true")).contains("needs inferencePool.create");
        assertThat(helmError("--set", "epp.pluginsConfigFile=missing.json")).contains("pluginsCustomConfig");
    }

    private static String helmError(String... args) throws Exception {
        Tools.Result r = Tools.helmTemplateResult(List.of(args));
        assertThat(r.exitCode())
                .as("helm template " + List.of(args) + " should fail")
                .isNotZero();
        return r.stderr();
    }

    private static List<String> kinds(Cases.Case c) throws Exception {
        return Manifests.check(Tools.helmTemplate(c.helmArgs())).names();
    }

    static String argAfter(JsonNode container, String flag) {
        List<String> args = Manifests.strings(container.path("args"));
        int i = args.indexOf(flag);
        assertThat(i).as(flag + " in " + args).isNotNegative();
        return args.get(i + 1);
    }

    private static String selectorString(Map<String, String> labels) {
        return String.join(
                ",",
                new TreeMap<>(labels)
                        .entrySet().stream()
                                .map(e -> e.getKey() + "=" + e.getValue())
                                .toList());
    }
}
