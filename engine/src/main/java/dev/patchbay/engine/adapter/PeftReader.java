package dev.patchbay.engine.adapter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.engine.adapter.AdapterException.Kind;
import dev.patchbay.engine.format.Safetensors;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads and validates a PEFT LoRA directory ({@code adapter_config.json} + {@code adapter_model.safetensors})
 * against the base model, with vLLM's rejection rules. Only the safetensors header is read here; the
 * weights are read later, off the engine loop, by the executor.
 */
public final class PeftReader {
    public static final String CONFIG_FILE = "adapter_config.json";
    public static final String WEIGHTS_FILE = "adapter_model.safetensors";

    /** PEFT names: base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight (optionally .default.weight). */
    private static final Pattern TENSOR_NAME = Pattern.compile(
            "^(?:base_model\\.model\\.)?model\\.layers\\.(\\d+)\\.(?:self_attn|mlp)\\.(\\w+)\\.lora_([AB])(?:\\.\\w+)?\\.weight$");

    private static final ObjectMapper JSON = new ObjectMapper();

    private PeftReader() {}

    public static AdapterSpec read(String name, Path dir, ModelConfig base, int maxLoraRank) throws AdapterException {
        Path configFile = dir.resolve(CONFIG_FILE);
        if (!Files.isDirectory(dir) || !Files.isRegularFile(configFile)) {
            throw new AdapterException(Kind.NOT_FOUND, "No adapter found for " + dir);
        }
        JsonNode cfg;
        try {
            cfg = JSON.readTree(configFile.toFile());
        } catch (IOException e) {
            throw new AdapterException(Kind.INVALID, configFile + " is not valid JSON: " + e.getMessage(), e);
        }
        if (cfg == null || !cfg.isObject())
            throw new AdapterException(Kind.INVALID, configFile + " is not a JSON object");

        Set<String> missing = new TreeSet<>();
        for (String f : List.of("r", "lora_alpha", "target_modules")) if (!cfg.hasNonNull(f)) missing.add(f);
        if (!missing.isEmpty())
            throw new AdapterException(Kind.INVALID, "Missing required configuration fields: " + missing);
        String peftType = cfg.path("peft_type").asText("LORA");
        if (!peftType.equalsIgnoreCase("LORA")) {
            throw new AdapterException(
                    Kind.INVALID, "Only LoRA adapters are supported, this one is peft_type " + peftType);
        }
        if (cfg.path("use_dora").asBoolean(false)) {
            throw new AdapterException(Kind.INVALID, "DoRA adapters (use_dora=true) are not supported.");
        }
        if (cfg.hasNonNull("modules_to_save")
                && !(cfg.get("modules_to_save").isArray()
                        && cfg.get("modules_to_save").isEmpty())) {
            throw new AdapterException(
                    Kind.INVALID,
                    "Only modules_to_save=None is supported, this adapter saves " + cfg.get("modules_to_save"));
        }
        String bias = cfg.path("bias").asText("none");
        if (!bias.equals("none")) {
            throw new AdapterException(Kind.INVALID, "Adapter bias is not supported (bias=\"" + bias + "\").");
        }
        int r = cfg.get("r").asInt(0);
        if (r <= 0)
            throw new AdapterException(Kind.INVALID, "LoRA rank r must be a positive integer, got " + cfg.get("r"));
        double alpha = cfg.get("lora_alpha").asDouble();
        boolean rsLora = cfg.path("use_rslora").asBoolean(false);
        Map<String, Integer> rankPattern = intMap(cfg.path("rank_pattern"));
        Map<String, Double> alphaPattern = doubleMap(cfg.path("alpha_pattern"));
        int maxRank = r;
        for (int pr : rankPattern.values()) maxRank = Math.max(maxRank, pr);
        if (maxRank > maxLoraRank) {
            throw new AdapterException(
                    Kind.INVALID, "LoRA rank " + maxRank + " is greater than max_lora_rank " + maxLoraRank + ".");
        }

        Map<String, int[]> baseShapes = base.loraTargetShapes();
        Set<String> targets = targetModules(cfg.get("target_modules"), baseShapes.keySet());
        Set<String> unsupported = new TreeSet<>(targets);
        unsupported.removeAll(baseShapes.keySet());
        if (targets.isEmpty() || !unsupported.isEmpty()) {
            throw new AdapterException(
                    Kind.INVALID,
                    "While loading " + dir + ", expected target modules in " + baseShapes.keySet() + " but received "
                            + (targets.isEmpty() ? cfg.get("target_modules") : unsupported));
        }

        Path weights = dir.resolve(WEIGHTS_FILE);
        if (!Files.isRegularFile(weights)) {
            throw new AdapterException(Kind.INVALID, dir + " doesn't contain tensors (expected " + WEIGHTS_FILE + ")");
        }
        Safetensors st;
        try {
            st = Safetensors.readHeader(weights);
        } catch (IOException e) {
            throw new AdapterException(Kind.INVALID, e.getMessage(), e);
        }
        if (st.tensors().isEmpty()) throw new AdapterException(Kind.INVALID, dir + " doesn't contain tensors");

        // Group A and B tensors by (layer, module) and check each against the base model's shapes.
        Map<String, String[]> pairs = new TreeMap<>();
        for (Safetensors.TensorInfo t : st.tensors().values()) {
            Matcher m = TENSOR_NAME.matcher(t.name());
            if (!m.matches()) {
                throw new AdapterException(
                        Kind.INVALID,
                        "While loading " + dir + ", unexpected tensor '" + t.name()
                                + "': only LoRA A/B weights of decoder-layer projections are supported");
            }
            int layer = Integer.parseInt(m.group(1));
            String module = m.group(2);
            if (!baseShapes.containsKey(module)) {
                throw new AdapterException(
                        Kind.INVALID,
                        "While loading " + dir + ", expected target modules in " + baseShapes.keySet()
                                + " but received [" + module + "]");
            }
            if (layer >= base.numLayers()) {
                throw new AdapterException(
                        Kind.INVALID,
                        "Tensor '" + t.name() + "' is for layer " + layer + " but the base model has "
                                + base.numLayers() + " layers");
            }
            String key = String.format("%05d.%s", layer, module);
            pairs.computeIfAbsent(key, k -> new String[2])[m.group(3).equals("A") ? 0 : 1] = t.name();
        }
        List<AdapterSpec.Module> modules = new ArrayList<>();
        for (Map.Entry<String, String[]> e : pairs.entrySet()) {
            String[] ab = e.getValue();
            int layer = Integer.parseInt(e.getKey().substring(0, 5));
            String module = e.getKey().substring(6);
            if (ab[0] == null || ab[1] == null) {
                throw new AdapterException(
                        Kind.INVALID,
                        "Layer " + layer + " " + module + " has only lora_" + (ab[0] == null ? "B" : "A")
                                + "; both lora_A and lora_B are needed");
            }
            int[] io = baseShapes.get(module);
            Safetensors.TensorInfo a = st.tensors().get(ab[0]);
            Safetensors.TensorInfo b = st.tensors().get(ab[1]);
            int moduleRank = rankPattern.getOrDefault(module, r);
            long[] wantA = {moduleRank, io[0]};
            long[] wantB = {io[1], moduleRank};
            if (!Arrays.equals(a.shape(), wantA)) throw wrongShape(a, wantA);
            if (!Arrays.equals(b.shape(), wantB)) throw wrongShape(b, wantB);
            if (!isFloat(a.dtype()) || !isFloat(b.dtype())) {
                throw new AdapterException(
                        Kind.INVALID,
                        "Tensor '" + ab[0] + "' has dtype " + a.dtype() + "; LoRA weights must be F32, F16 or BF16");
            }
            double moduleAlpha = alphaPattern.getOrDefault(module, alpha);
            double scale = rsLora ? moduleAlpha / Math.sqrt(moduleRank) : moduleAlpha / moduleRank;
            modules.add(new AdapterSpec.Module(layer, module, ab[0], ab[1], moduleRank, io[0], io[1], scale));
        }
        long bytes = st.tensors().values().stream()
                .mapToLong(Safetensors.TensorInfo::byteSize)
                .sum();
        double scale = rsLora ? alpha / Math.sqrt(r) : alpha / r;
        return new AdapterSpec(
                name,
                dir,
                maxRank,
                alpha,
                scale,
                rsLora,
                targets,
                cfg.path("base_model_name_or_path").asText(""),
                st,
                List.copyOf(modules),
                bytes);
    }

    private static boolean isFloat(String dtype) {
        return dtype.equals("F32") || dtype.equals("F16") || dtype.equals("BF16");
    }

    private static AdapterException wrongShape(Safetensors.TensorInfo t, long[] want) {
        return new AdapterException(
                Kind.INVALID,
                "Tensor '" + t.name() + "' has shape " + Arrays.toString(t.shape()) + " but the base model needs "
                        + Arrays.toString(want));
    }

    /** target_modules is a list of names, or a string: a single name, "all-linear", or a regex over full names. */
    private static Set<String> targetModules(JsonNode node, Set<String> known) {
        Set<String> out = new LinkedHashSet<>();
        if (node.isArray()) {
            node.forEach(n -> out.add(n.asText()));
        } else if (node.isTextual()) {
            String s = node.asText();
            if (s.equals("all-linear")) return new LinkedHashSet<>(known);
            if (s.matches("\\w+")) {
                out.add(s);
            } else {
                Pattern p = Pattern.compile(s);
                for (String k : known)
                    if (p.matcher("model.layers.0.self_attn." + k).matches()
                            || p.matcher("model.layers.0.mlp." + k).matches()) out.add(k);
            }
        }
        return out;
    }

    private static Map<String, Integer> intMap(JsonNode n) {
        Map<String, Integer> m = new HashMap<>();
        if (n.isObject())
            n.fields()
                    .forEachRemaining(
                            e -> m.put(lastPart(e.getKey()), e.getValue().asInt()));
        return m;
    }

    private static Map<String, Double> doubleMap(JsonNode n) {
        Map<String, Double> m = new HashMap<>();
        if (n.isObject())
            n.fields()
                    .forEachRemaining(
                            e -> m.put(lastPart(e.getKey()), e.getValue().asDouble()));
        return m;
    }

    private static String lastPart(String key) {
        int dot = key.lastIndexOf('.');
        return dot < 0 ? key : key.substring(dot + 1);
    }
}
