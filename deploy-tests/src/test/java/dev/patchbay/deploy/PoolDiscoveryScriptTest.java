package dev.patchbay.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointsFile;
import dev.patchbay.testkit.Await;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The router pod's discovery sidecar (discover.sh from the chart's ConfigMap, with the env the chart gives it) run
 * with a real kubectl against a stand-in Kubernetes API on loopback: the endpoints file it writes is the pool's
 * running pods, and the router's own reader takes it.
 */
class PoolDiscoveryScriptTest {
    @TempDir
    Path dir;

    private final AtomicReference<List<JsonNode>> pods = new AtomicReference<>(List.of());
    private final List<String> podQueries = new CopyOnWriteArrayList<>();

    @Test
    void endpointsFileFollowsThePoolsRunningPods() throws Exception {
        Manifests m = Manifests.check(Tools.helmTemplate(Cases.EVERYTHING.helmArgs()));
        JsonNode deployment = m.one("Deployment", "patchbay-router");
        JsonNode discovery = Manifests.container(deployment, "discovery");
        Path script = Files.writeString(
                dir.resolve("discover.sh"),
                m.one("ConfigMap", "patchbay-router")
                        .path("data")
                        .path("discover.sh")
                        .asText());
        Map<String, String> env = Manifests.env(discovery);
        String selector = env.get("POOL_SELECTOR");
        assertThat(selector).isEqualTo("pool=lora-fleet");

        HttpServer api = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        api.createContext("/", this::answer);
        api.start();
        Path kubectlDir = Tools.kubectl().getParent();
        Path kubeconfig = Files.writeString(
                dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: test, cluster: {server: "http://127.0.0.1:%d"}}]
                users: [{name: test, user: {}}]
                contexts: [{name: test, context: {cluster: test, user: test, namespace: ns1}}]
                current-context: test
                """.formatted(api.getAddress().getPort()));
        Path endpoints = dir.resolve("pool/endpoints.txt");
        Files.createDirectories(endpoints.getParent());

        pods.set(List.of(
                pod("a", "10.1.0.5", "Running", false),
                pod("b", "10.1.0.6", "Running", true),
                pod("c", null, "Running", false),
                pod("d", "fd00::7", "Running", false)));
        ProcessBuilder pb = new ProcessBuilder("/bin/bash", script.toString())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("discovery.log").toFile());
        pb.environment().putAll(env);
        pb.environment().put("POOL_FILE", endpoints.toString());
        pb.environment().put("POOL_NAMESPACE", "ns1"); // from the pod's metadata.namespace in a cluster
        pb.environment().put("POOL_INTERVAL_SECONDS", "0.1");
        pb.environment().put("KUBECONFIG", kubeconfig.toString());
        pb.environment().put("KUBECACHEDIR", dir.resolve("kube-cache").toString());
        pb.environment().put("HOME", dir.toString());
        pb.environment().put("PATH", kubectlDir + ":/usr/bin:/bin");
        Process p = pb.start();
        try {
            EndpointsFile reader = new EndpointsFile(endpoints);
            // A pod being deleted, and one without an address yet, are left out; IPv6 goes in brackets.
            Await.until(
                    "the first pool list",
                    () -> read(reader).equals(List.of(new Endpoint("10.1.0.5", 8000), new Endpoint("fd00::7", 8000))),
                    () -> log());
            assertThat(Files.readString(endpoints)).isEqualTo("10.1.0.5:8000\n[fd00::7]:8000\n");

            pods.set(List.of(pod("d", "fd00::7", "Running", false), pod("e", "10.1.0.9", "Running", false)));
            Await.until(
                    "the pool after a pod left and one came",
                    () -> read(reader).equals(List.of(new Endpoint("10.1.0.9", 8000), new Endpoint("fd00::7", 8000))),
                    () -> log());
        } finally {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) p.destroyForcibly();
            api.stop(0);
        }
        String query = podQueries.getFirst();
        assertThat(query).contains("labelSelector=" + selector).contains("fieldSelector=status.phase=Running");
    }

    private List<Endpoint> read(EndpointsFile reader) {
        try {
            return Files.exists(dir.resolve("pool/endpoints.txt")) ? reader.current() : List.of();
        } catch (IOException e) {
            return List.of();
        }
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("discovery.log")) + " queries=" + podQueries;
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static JsonNode pod(String name, String ip, String phase, boolean deleting) {
        ObjectNode pod = Manifests.JSON.createObjectNode();
        ObjectNode meta = pod.putObject("metadata").put("name", name).put("namespace", "ns1");
        if (deleting) meta.put("deletionTimestamp", "2026-01-01T00:00:00Z");
        ObjectNode status = pod.putObject("status").put("phase", phase);
        if (ip != null) status.put("podIP", ip);
        return pod;
    }

    /** The few API paths kubectl reads for `get pods`: discovery, then the pod list. */
    private void answer(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        ObjectNode body = Manifests.JSON.createObjectNode();
        switch (path) {
            case "/version" -> body.put("major", "1").put("minor", "35").put("gitVersion", "v1.35.2");
            case "/api" ->
                body.put("kind", "APIVersions")
                        .set("versions", Manifests.JSON.createArrayNode().add("v1"));
            case "/apis" ->
                body.put("kind", "APIGroupList").put("apiVersion", "v1").putArray("groups");
            case "/api/v1" -> {
                body.put("kind", "APIResourceList").put("groupVersion", "v1");
                body.putArray("resources")
                        .addObject()
                        .put("name", "pods")
                        .put("singularName", "pod")
                        .put("namespaced", true)
                        .put("kind", "Pod")
                        .set(
                                "verbs",
                                Manifests.JSON.createArrayNode().add("get").add("list"));
            }
            case "/api/v1/namespaces/ns1/pods" -> {
                podQueries.add(URLDecoder.decode(ex.getRequestURI().getRawQuery(), StandardCharsets.UTF_8));
                body.put("kind", "PodList").put("apiVersion", "v1").putObject("metadata");
                ArrayNode items = body.putArray("items");
                pods.get().forEach(items::add);
            }
            default -> {
                ex.sendResponseHeaders(404, -1);
                ex.close();
                return;
            }
        }
        byte[] bytes = Manifests.JSON.writeValueAsBytes(body);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(200, bytes.length);
        ex.getResponseBody().write(bytes);
        ex.close();
    }
}
