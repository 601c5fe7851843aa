package dev.patchbay.server;

import dev.patchbay.engine.model.Model;
import dev.patchbay.engine.model.ModelConfig;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.model.LlamaModel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds the model {@code --model} names: the simulated one ({@code sim:<name>}) or a model directory. */
final class ModelFactory {
    /** KV cache budget of a real model when {@code --num-gpu-blocks-override} is not given. */
    private static final long DEFAULT_KV_BYTES = 1L << 30;

    private ModelFactory() {}

    static Model create(ServerOptions o) throws PatchbayServer.StartupException {
        if (o.simulated()) {
            return new SimModel(o.servedName(), SimModel.DEFAULT_CONFIG, o.simLatency(), o.simText(), o.simEosProbability());
        }
        Path dir = Path.of(o.model());
        if (!Files.isDirectory(dir)) {
            throw new PatchbayServer.StartupException("--model " + o.model() + " is neither a directory nor sim:<name>", null);
        }
        try {
            ModelConfig config = ModelConfig.read(dir.resolve("config.json"));
            int blocks = o.numKvBlocks() != null ? o.numKvBlocks() : defaultBlocks(config, o.blockSize());
            return LlamaModel.load(dir, blocks, o.blockSize(), o.maxLoras(), Runtime.getRuntime().availableProcessors(),
                    System.err);
        } catch (IOException e) {
            throw new PatchbayServer.StartupException("cannot load model from " + dir + ": " + e.getMessage(), e);
        }
    }

    private static int defaultBlocks(ModelConfig c, int blockSize) {
        long perToken = 2L * c.numLayers() * c.numKvHeads() * c.headDim() * Float.BYTES;
        return (int) Math.max(16, Math.min(65536, DEFAULT_KV_BYTES / (perToken * blockSize)));
    }
}
