package dev.patchbay.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.format.Safetensors;
import dev.patchbay.engine.format.SafetensorsWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Rewrites generated models: merged LoRA weights, widened dtypes, edited config fields. */
final class TestModels {
    private static final List<String> SIDE_FILES = List.of("config.json", "tokenizer.json", "tokenizer_config.json");

    private TestModels() {}

    static Map<String, float[]> readF32(Path file) throws IOException {
        Safetensors st = Safetensors.readHeader(file);
        byte[] bytes = Files.readAllBytes(file);
        Map<String, float[]> out = new LinkedHashMap<>();
        for (Safetensors.TensorInfo t : st.tensors().values()) {
            ByteBuffer b = ByteBuffer.wrap(bytes, (int) (st.dataStart() + t.begin()), (int) t.byteSize())
                    .order(ByteOrder.LITTLE_ENDIAN);
            float[] v = new float[(int) t.numElements()];
            for (int i = 0; i < v.length; i++) {
                v[i] = switch (t.dtype()) {
                    case "F32" -> b.getFloat();
                    case "BF16" -> Float.intBitsToFloat((b.getShort() & 0xffff) << 16);
                    case "F16" -> Float.float16ToFloat(b.getShort());
                    default -> throw new IOException("unexpected dtype " + t.dtype());
                };
            }
            out.put(t.name(), v);
        }
        return out;
    }

    static void write(Path modelDir, Path from, Map<String, float[]> tensors) throws IOException {
        Files.createDirectories(modelDir);
        Safetensors shapes = Safetensors.readHeader(from.resolve("model.safetensors"));
        SafetensorsWriter w = new SafetensorsWriter();
        tensors.forEach((name, v) -> w.addF32(name, shapes.tensors().get(name).shape(), v));
        w.write(modelDir.resolve("model.safetensors"));
        for (String f : SIDE_FILES) Files.copy(from.resolve(f), modelDir.resolve(f));
        // The copy is F32 now, whatever the original said.
        var config = (ObjectNode)
                new ObjectMapper().readTree(modelDir.resolve("config.json").toFile());
        config.put("torch_dtype", "float32");
        new ObjectMapper().writeValue(modelDir.resolve("config.json").toFile(), config);
    }

    /** Sets config.json's {@code field} to {@code value} (null writes JSON null). */
    static void editConfig(Path modelDir, String field, Object value) throws IOException {
        ObjectMapper om = new ObjectMapper();
        var config = (ObjectNode) om.readTree(modelDir.resolve("config.json").toFile());
        config.set(field, om.valueToTree(value));
        om.writeValue(modelDir.resolve("config.json").toFile(), config);
    }

    static void convertToF32(Path halfModel, Path out) throws IOException {
        write(out, halfModel, readF32(halfModel.resolve("model.safetensors")));
    }

    /** Writes a model whose weights are W + (alpha / r) * B * A for each adapted projection. */
    static void mergeAdapter(Path model, Path adapter, Path out) throws IOException {
        Map<String, float[]> w = readF32(model.resolve("model.safetensors"));
        Map<String, float[]> lora = readF32(adapter.resolve("adapter_model.safetensors"));
        var cfg = new ObjectMapper()
                .readTree(adapter.resolve("adapter_config.json").toFile());
        int r = cfg.get("r").asInt();
        double scale = cfg.get("lora_alpha").asDouble() / r;
        for (var e : lora.entrySet()) {
            if (!e.getKey().contains("lora_A")) continue;
            float[] a = e.getValue();
            float[] b = lora.get(e.getKey().replace("lora_A", "lora_B"));
            String target = e.getKey().replace("base_model.model.", "").replace(".lora_A", "");
            float[] weight = w.get(target);
            int in = a.length / r, outDim = b.length / r;
            for (int o = 0; o < outDim; o++) {
                for (int i = 0; i < in; i++) {
                    double d = 0;
                    for (int k = 0; k < r; k++) d += (double) b[o * r + k] * a[k * in + i];
                    weight[o * in + i] += (float) (scale * d);
                }
            }
        }
        write(out, model, w);
    }

    static void convertAdapterToF32(Path adapter, Path out) throws IOException {
        Files.createDirectories(out);
        Path weights = adapter.resolve("adapter_model.safetensors");
        Safetensors shapes = Safetensors.readHeader(weights);
        SafetensorsWriter w = new SafetensorsWriter();
        readF32(weights)
                .forEach((name, v) -> w.addF32(name, shapes.tensors().get(name).shape(), v));
        w.write(out.resolve("adapter_model.safetensors"));
        Files.copy(adapter.resolve("adapter_config.json"), out.resolve("adapter_config.json"));
    }
}
