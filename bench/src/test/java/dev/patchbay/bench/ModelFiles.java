package dev.patchbay.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.format.Safetensors;
import dev.patchbay.engine.format.SafetensorsWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Model directories derived from a generated F32 one: a config field changed, or the weights rewritten (an adapter
 * folded in, one value changed). The tensors are read and written here, not by the model module, so a reference
 * built from them does not share Patchbay's loader.
 */
final class ModelFiles {
    static final String WEIGHTS = "model.safetensors";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A tensor's shape and values. */
    record Tensor(long[] shape, float[] values) {}

    private ModelFiles() {}

    static void editConfig(Path modelDir, String field, Object value) throws IOException {
        ObjectNode config =
                (ObjectNode) JSON.readTree(modelDir.resolve("config.json").toFile());
        config.set(field, JSON.valueToTree(value));
        JSON.writeValue(modelDir.resolve("config.json").toFile(), config);
    }

    /** The dtype of the model's embedding table, which the generated models share with every weight. */
    static String dtype(Path modelDir) throws IOException {
        return Safetensors.readHeader(modelDir.resolve(WEIGHTS))
                .tensors()
                .get("model.embed_tokens.weight")
                .dtype();
    }

    /** Copies a model directory's files. */
    static void copy(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : files.toList()) if (Files.isRegularFile(f)) Files.copy(f, to.resolve(f.getFileName()));
        }
    }

    /** Every tensor of an F32 safetensors file, in file order. */
    static Map<String, Tensor> readF32(Path file) throws IOException {
        Safetensors st = Safetensors.readHeader(file);
        Map<String, Tensor> out = new LinkedHashMap<>();
        try (FileChannel ch = FileChannel.open(file)) {
            for (Safetensors.TensorInfo t : st.tensors().values()) {
                if (!t.dtype().equals("F32"))
                    throw new IOException(file + ": " + t.name() + " is " + t.dtype() + ", not F32");
                ByteBuffer b = ByteBuffer.allocate((int) t.byteSize()).order(ByteOrder.LITTLE_ENDIAN);
                ch.read(b, st.dataStart() + t.begin());
                float[] v = new float[(int) t.numElements()];
                b.flip().asFloatBuffer().get(v);
                out.put(t.name(), new Tensor(t.shape(), v));
            }
        }
        return out;
    }

    /** Copies {@code from} to {@code to} (config and tokenizer files as they are), the weights edited by {@code edit}. */
    static void copyWithWeights(Path from, Path to, Consumer<Map<String, Tensor>> edit) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : files.toList()) {
                if (Files.isRegularFile(f) && !f.getFileName().toString().equals(WEIGHTS))
                    Files.copy(f, to.resolve(f.getFileName()));
            }
        }
        Map<String, Tensor> weights = readF32(from.resolve(WEIGHTS));
        edit.accept(weights);
        SafetensorsWriter w = new SafetensorsWriter();
        weights.forEach((name, t) -> w.addF32(name, t.shape(), t.values()));
        w.write(to.resolve(WEIGHTS));
    }

    /**
     * Writes the base model with a PEFT LoRA adapter folded in: each adapted projection's weight becomes
     * W + (lora_alpha / r)·B·A, as PEFT's merge_and_unload computes it.
     */
    static void mergeAdapter(Path base, Path adapter, Path out) throws IOException {
        JsonNode cfg = JSON.readTree(adapter.resolve("adapter_config.json").toFile());
        if (cfg.path("use_rslora").asBoolean(false)) throw new IOException("rsLoRA's scale is not folded here");
        double scale = cfg.path("lora_alpha").asDouble() / cfg.path("r").asInt();
        Map<String, Tensor> lora = readF32(adapter.resolve("adapter_model.safetensors"));
        copyWithWeights(base, out, weights -> {
            int folded = 0;
            for (var e : lora.entrySet()) {
                if (!e.getKey().endsWith(".lora_A.weight")) continue;
                String module = e.getKey().substring(0, e.getKey().length() - ".lora_A.weight".length());
                Tensor a = e.getValue(), b = lora.get(module + ".lora_B.weight");
                // PEFT names base_model.model.<the base model's module>.
                Tensor w = weights.get(module.substring("base_model.model.".length()) + ".weight");
                int rank = (int) a.shape()[0], in = (int) a.shape()[1], outDim = (int) b.shape()[0];
                if (w == null || w.shape()[0] != outDim || w.shape()[1] != in || b.shape()[1] != rank) {
                    throw new IllegalStateException(module + ": adapter shapes do not fit the base weight");
                }
                for (int o = 0; o < outDim; o++) {
                    for (int i = 0; i < in; i++) {
                        double d = 0;
                        for (int r = 0; r < rank; r++) d += (double) b.values()[o * rank + r] * a.values()[r * in + i];
                        w.values()[o * in + i] = (float) (w.values()[o * in + i] + scale * d);
                    }
                }
                folded++;
            }
            if (folded == 0) throw new IllegalStateException(adapter + ": no lora_A tensors");
        });
    }
}
