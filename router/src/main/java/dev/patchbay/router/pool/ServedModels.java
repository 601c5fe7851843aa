package dev.patchbay.router.pool;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The models an endpoint lists on its OpenAI {@code /v1/models}: every {@code id}, and apart the base models, the
 * entries without a {@code parent} (vLLM, llm-d-inference-sim and Patchbay give each adapter its base model as
 * parent). {@link #UNKNOWN} when the router has no list from the endpoint: none fetched yet, the fetch failed, the
 * server has no such path, or its list is empty (a vLLM server always lists its base model, so an empty list says
 * nothing about what it serves).
 */
public record ServedModels(Set<String> models, Set<String> baseModels, Map<String, String> adapterRoots) {
    public static final ServedModels UNKNOWN = new ServedModels(Set.of(), Set.of());
    private static final ObjectMapper JSON = new ObjectMapper();

    public ServedModels {
        models = Set.copyOf(models);
        baseModels = Set.copyOf(baseModels);
        adapterRoots = Map.copyOf(adapterRoots);
        if (!models.containsAll(baseModels)) {
            throw new IllegalArgumentException("base models " + baseModels + " not among the models " + models);
        }
    }

    /** A list without the adapters' {@code root}s (where their files are). */
    public ServedModels(Set<String> models, Set<String> baseModels) {
        this(models, baseModels, Map.of());
    }

    /** A list is known: the endpoint serves exactly these models (and any its resolver may load on demand). */
    public boolean known() {
        return !models.isEmpty();
    }

    public boolean lists(String model) {
        return models.contains(model);
    }

    /** Reads an OpenAI model list, {@code {"object": "list", "data": [{"id": ..., "parent": ...}, ...]}}. */
    public static ServedModels parse(String body) throws IOException {
        JsonNode root = JSON.readTree(body);
        JsonNode data = root == null ? null : root.get("data");
        if (data == null || !data.isArray()) {
            throw new IOException("not an OpenAI model list: no \"data\" array");
        }
        Set<String> models = new HashSet<>();
        Set<String> bases = new HashSet<>();
        Map<String, String> roots = new HashMap<>();
        for (JsonNode card : data) {
            JsonNode id = card.get("id");
            if (id == null || !id.isTextual() || id.asText().isEmpty()) {
                throw new IOException("not an OpenAI model list: an entry without an \"id\" string");
            }
            models.add(id.asText());
            JsonNode parent = card.get("parent");
            if (parent == null || parent.isNull()) {
                bases.add(id.asText());
            } else if (card.get("root") instanceof JsonNode files
                    && files.isTextual()
                    && !files.asText().isEmpty()) {
                // vLLM and Patchbay give an adapter's files as its root: what loading it elsewhere needs.
                roots.put(id.asText(), files.asText());
            }
        }
        return new ServedModels(models, bases, roots);
    }
}
