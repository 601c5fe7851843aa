package dev.patchbay.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A set of rendered Kubernetes objects and each one's schema verdict. The node checker
 * (deploy-tests/src/test/node/validate.mjs) parses the YAML as Kubernetes does and validates every object against
 * its OpenAPI or CRD schema; the Kubernetes Java client's models then reject fields a built-in kind does not have.
 */
record Manifests(List<JsonNode> objects, Map<JsonNode, List<String>> errors) {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODELS = "io.kubernetes.client.openapi.models.";

    static Manifests check(String yaml) throws IOException, InterruptedException {
        Path file = Files.createTempFile("manifests", ".yaml");
        try {
            Files.writeString(file, yaml);
            Tools.Result r = Tools.run(
                    List.of(
                            Tools.node().toString(),
                            Repo.nodeChecks().resolve("validate.mjs").toString(),
                            file.toString(),
                            Repo.inferencePoolCrd().toString()),
                    Repo.nodeChecks(),
                    Map.of());
            if (r.exitCode() != 0) {
                throw new AssertionError("validate.mjs failed: " + r.stderr());
            }
            JsonNode out = JSON.readTree(r.stdout());
            List<JsonNode> objects = new ArrayList<>();
            Map<JsonNode, List<String>> errors = new IdentityHashMap<>();
            for (int i = 0; i < out.path("objects").size(); i++) {
                JsonNode object = out.path("objects").get(i);
                List<String> found = new ArrayList<>();
                out.path("results").get(i).path("errors").forEach(e -> found.add(e.asText()));
                found.addAll(unknownFields(object));
                objects.add(object);
                errors.put(object, found);
            }
            return new Manifests(List.copyOf(objects), errors);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** The Java client's strict check for built-in kinds (its models list every field the API has). */
    static List<String> unknownFields(JsonNode object) {
        Optional<Class<?>> model = javaModel(
                object.path("apiVersion").asText(), object.path("kind").asText());
        if (model.isEmpty()) {
            return List.of();
        }
        try {
            model.get()
                    .getMethod("validateJsonElement", JsonElement.class)
                    .invoke(null, JsonParser.parseString(object.toString()));
            return List.of();
        } catch (InvocationTargetException e) {
            return List.of(model.get().getSimpleName() + ": " + e.getCause().getMessage());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /** V1Deployment for apps/v1 Deployment, and so on; empty for kinds the client does not model (CRDs). */
    static Optional<Class<?>> javaModel(String apiVersion, String kind) {
        String version = apiVersion.substring(apiVersion.indexOf('/') + 1);
        String group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
        if (!List.of("", "apps", "rbac.authorization.k8s.io", "policy", "autoscaling")
                .contains(group)) {
            return Optional.empty();
        }
        try {
            return Optional.of(
                    Class.forName(MODELS + Character.toUpperCase(version.charAt(0)) + version.substring(1) + kind));
        } catch (ClassNotFoundException e) {
            return Optional.empty();
        }
    }

    List<String> allErrors() {
        List<String> all = new ArrayList<>();
        for (JsonNode o : objects) {
            for (String e : errors.get(o)) {
                all.add(o.path("kind").asText() + " "
                        + o.path("metadata").path("name").asText() + ": " + e);
            }
        }
        return all;
    }

    List<JsonNode> ofKind(String kind) {
        return objects.stream()
                .filter(o -> o.path("kind").asText().equals(kind))
                .toList();
    }

    JsonNode one(String kind, String name) {
        return objects.stream()
                .filter(o -> o.path("kind").asText().equals(kind)
                        && o.path("metadata").path("name").asText().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name + " among " + names()));
    }

    Optional<JsonNode> find(String kind, String name) {
        return objects.stream()
                .filter(o -> o.path("kind").asText().equals(kind)
                        && o.path("metadata").path("name").asText().equals(name))
                .findFirst();
    }

    List<String> names() {
        return objects.stream()
                .map(o -> o.path("kind").asText() + "/"
                        + o.path("metadata").path("name").asText())
                .toList();
    }

    /** The container {@code name} of a Deployment. */
    static JsonNode container(JsonNode deployment, String name) {
        for (JsonNode c : deployment.path("spec").path("template").path("spec").path("containers")) {
            if (c.path("name").asText().equals(name)) {
                return c;
            }
        }
        throw new AssertionError("no container " + name + " in "
                + deployment.path("metadata").path("name").asText());
    }

    static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    /** A container's plain env values (valueFrom entries are left out). */
    static Map<String, String> env(JsonNode container) {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode e : container.path("env")) {
            if (e.has("value")) {
                out.put(e.path("name").asText(), e.path("value").asText());
            }
        }
        return out;
    }
}
