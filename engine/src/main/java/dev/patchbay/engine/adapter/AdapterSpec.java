package dev.patchbay.engine.adapter;

import dev.patchbay.engine.format.Safetensors;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * A validated PEFT LoRA adapter on storage: what its config says and where its tensors are.
 *
 * @param rank          the largest rank among its modules
 * @param scale         lora_alpha / r, or lora_alpha / sqrt(r) with rsLoRA
 * @param modules       one entry per adapted projection (layer, module, A and B tensor names)
 * @param weightBytes   bytes of all its tensors
 */
public record AdapterSpec(
        String name,
        Path path,
        int rank,
        double alpha,
        double scale,
        boolean rsLora,
        Set<String> targetModules,
        String baseModelName,
        Safetensors tensors,
        List<Module> modules,
        long weightBytes) {

    /** One adapted projection: x·Aᵀ (A is rank x in) then ·Bᵀ (B is out x rank), times {@code scale}. */
    public record Module(
            int layer, String module, String tensorA, String tensorB, int rank, int in, int out, double scale) {}
}
