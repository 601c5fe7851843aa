package dev.patchbay.engine.adapter;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.format.SafetensorsWriter;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Writes a PEFT LoRA adapter directory for a base model: {@code adapter_config.json} and
 * {@code adapter_model.safetensors} with small random F32 weights. Used for demo adapters and tests.
 */
public final class PeftWriter {
    private PeftWriter() {}

    public static Path write(
            Path dir,
            ModelConfig base,
            String baseModelName,
            int rank,
            double alpha,
            List<String> targetModules,
            long seed)
            throws IOException {
        Files.createDirectories(dir);
        ObjectMapper om = new ObjectMapper();
        ObjectNode cfg = om.createObjectNode();
        cfg.put("peft_type", "LORA");
        cfg.put("task_type", "CAUSAL_LM");
        cfg.put("base_model_name_or_path", baseModelName);
        cfg.put("r", rank);
        cfg.put("lora_alpha", alpha);
        cfg.put("lora_dropout", 0.0);
        cfg.put("bias", "none");
        cfg.put("use_rslora", false);
        cfg.put("use_dora", false);
        cfg.putNull("modules_to_save");
        var targets = cfg.putArray("target_modules");
        targetModules.forEach(targets::add);
        om.writerWithDefaultPrettyPrinter()
                .writeValue(dir.resolve(PeftReader.CONFIG_FILE).toFile(), cfg);

        SplittableRandom rnd = new SplittableRandom(seed);
        SafetensorsWriter w = new SafetensorsWriter();
        var shapes = base.loraTargetShapes();
        for (int layer = 0; layer < base.numLayers(); layer++) {
            for (String m : targetModules) {
                int[] io = shapes.get(m);
                if (io == null) throw new IllegalArgumentException("base model has no module " + m);
                String group =
                        m.endsWith("_proj") && (m.startsWith("gate") || m.startsWith("up") || m.startsWith("down"))
                                ? "mlp"
                                : "self_attn";
                String prefix = "base_model.model.model.layers." + layer + "." + group + "." + m;
                w.add(prefix + ".lora_A.weight", "F32", new long[] {rank, io[0]}, randomF32(rank * io[0], rnd, 0.02));
                w.add(prefix + ".lora_B.weight", "F32", new long[] {io[1], rank}, randomF32(io[1] * rank, rnd, 0.02));
            }
        }
        w.write(dir.resolve(PeftReader.WEIGHTS_FILE));
        return dir;
    }

    private static byte[] randomF32(int n, SplittableRandom rnd, double scale) {
        ByteBuffer b = ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) b.putFloat((float) ((rnd.nextDouble() * 2 - 1) * scale));
        return b.array();
    }
}
