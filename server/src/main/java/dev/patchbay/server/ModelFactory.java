package dev.patchbay.server;

import dev.patchbay.engine.model.Model;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.model.KvCacheBudget;
import dev.patchbay.model.LlamaModel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds the model {@code --model} names: the simulated one ({@code sim:<name>}) or a model directory. */
final class ModelFactory {
    private ModelFactory() {}

    static Model create(ServerOptions o) throws PatchbayServer.StartupException {
        if (o.simulated()) {
            return new SimModel(
                    o.servedName(), SimModel.DEFAULT_CONFIG, o.simLatency(), o.simText(), o.simEosProbability());
        }
        Path dir = Path.of(o.model());
        if (!Files.isDirectory(dir)) {
            throw new PatchbayServer.StartupException(
                    "--model " + o.model() + " is neither a directory nor sim:<name>", null);
        }
        try {
            return LlamaModel.load(
                    dir,
                    kvBudget(o),
                    o.blockSize(),
                    o.maxLoras(),
                    Runtime.getRuntime().availableProcessors(),
                    System.err);
        } catch (IOException e) {
            throw new PatchbayServer.StartupException("cannot load model from " + dir + ": " + e.getMessage(), e);
        }
    }

    /** The override wins, then an explicit cache size, then the heap share (vLLM's order). */
    static KvCacheBudget kvBudget(ServerOptions o) {
        if (o.numKvBlocks() != null) return new KvCacheBudget.Blocks(o.numKvBlocks());
        if (o.kvCacheMemoryBytes() != null) return new KvCacheBudget.Bytes(o.kvCacheMemoryBytes());
        return new KvCacheBudget.HeapShare(
                o.gpuMemoryUtilization(), Runtime.getRuntime().maxMemory(), o.maxNumBatchedTokens(), o.maxNumSeqs());
    }
}
