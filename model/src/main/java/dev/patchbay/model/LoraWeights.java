package dev.patchbay.model;

import dev.patchbay.engine.adapter.AdapterSpec;
import dev.patchbay.engine.format.Safetensors;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * An adapter's LoRA weights per layer and projection, in the file's precision like the base weights (BF16, F16 and
 * F32 kept): A as PEFT stores it ({@code rank x in}, one row per rank, for the shrink dot products) and B
 * transposed ({@code rank x out}, so the expand step adds whole contiguous output rows).
 */
record LoraWeights(String name, Module[][] modules, long bytes) {
    /** The projections in the order the executor indexes them. */
    static final List<String> PROJECTIONS =
            List.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj");

    record Module(int rank, int in, int out, float scale, Matrix a, Matrix bTransposed) {}

    static LoraWeights load(AdapterSpec spec, ModelConfig config) throws IOException {
        Safetensors st = spec.tensors();
        Map<String, int[]> shapes = config.loraTargetShapes();
        Module[][] modules = new Module[config.numLayers()][PROJECTIONS.size()];
        long bytes = 0;
        for (AdapterSpec.Module m : spec.modules()) {
            int index = PROJECTIONS.indexOf(m.module());
            int[] io = shapes.get(m.module());
            if (index < 0 || m.layer() >= config.numLayers() || io[0] != m.in() || io[1] != m.out()) {
                throw new IOException(st.file() + ": module " + m.module() + " of layer " + m.layer()
                        + " does not fit the base model");
            }
            Matrix a = TensorFiles.readMatrix(st, m.tensorA(), m.rank(), m.in());
            Matrix bt = TensorFiles.readMatrixTransposed(st, m.tensorB(), m.out(), m.rank());
            modules[m.layer()][index] = new Module(m.rank(), m.in(), m.out(), (float) m.scale(), a, bt);
            bytes += a.bytes() + bt.bytes();
        }
        return new LoraWeights(spec.name(), modules, bytes);
    }
}
