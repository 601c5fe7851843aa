package dev.patchbay.server;

import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimulatedExecutor;
import java.nio.file.Path;
import java.util.List;

/**
 * Everything {@code patchbay serve} was told, validated. Built by {@link ServeCommand} from vLLM-style flags.
 *
 * @param model            a model directory, or {@code sim:<name>}
 * @param demoAdapters     demo adapters to write and serve (the no-flag quick start)
 * @param loraAllowedDirs  roots adapter paths must lie under (after resolving symlinks)
 * @param numKvBlocks      KV blocks, or null to size the cache from memory
 * @param gpuMemoryUtilization share of the JVM's max heap the real model's weights, activations and KV cache take
 * @param kvCacheMemoryBytes   the real model's KV cache size, or null to size it by {@code gpuMemoryUtilization}
 * @param maxModelLen      null for the model's own limit
 * @param maxLogprobs      most log probabilities a request may ask for per position, -1 for no limit
 * @param disableLogStats  no periodic stats line in the log
 */
public record ServerOptions(
        String model,
        String servedModelName,
        String host,
        int port,
        String apiKey,
        boolean enableLora,
        int maxLoras,
        Integer maxCpuLoras,
        int maxLoraRank,
        String loraDtype,
        List<LoraModule> loraModules,
        int maxNumSeqs,
        int maxNumBatchedTokens,
        Integer maxModelLen,
        int blockSize,
        boolean enablePrefixCaching,
        Integer numKvBlocks,
        double gpuMemoryUtilization,
        Long kvCacheMemoryBytes,
        String showHiddenMetricsForVersion,
        boolean allowRuntimeLoraUpdating,
        Path loraResolverDir,
        List<Path> loraAllowedDirs,
        int maxLoraMetricSeries,
        boolean enableLoraLatencyMetrics,
        int maxWaitingRequests,
        long maxRequestBodyBytes,
        long seed,
        LatencyModel simLatency,
        SimulatedExecutor.TextMode simText,
        double simEosProbability,
        int demoAdapters,
        double shutdownGraceSeconds,
        String patchbayVersion,
        int maxLogprobs,
        boolean disableLogStats) {

    /** A {@code --lora-modules} entry. */
    public record LoraModule(String name, Path path, String baseModelName) {}

    /** The same options on a server that reports another version (tests of the deprecation lifecycle). */
    public ServerOptions withPatchbayVersion(String version) {
        return new ServerOptions(
                model,
                servedModelName,
                host,
                port,
                apiKey,
                enableLora,
                maxLoras,
                maxCpuLoras,
                maxLoraRank,
                loraDtype,
                loraModules,
                maxNumSeqs,
                maxNumBatchedTokens,
                maxModelLen,
                blockSize,
                enablePrefixCaching,
                numKvBlocks,
                gpuMemoryUtilization,
                kvCacheMemoryBytes,
                showHiddenMetricsForVersion,
                allowRuntimeLoraUpdating,
                loraResolverDir,
                loraAllowedDirs,
                maxLoraMetricSeries,
                enableLoraLatencyMetrics,
                maxWaitingRequests,
                maxRequestBodyBytes,
                seed,
                simLatency,
                simText,
                simEosProbability,
                demoAdapters,
                shutdownGraceSeconds,
                version,
                maxLogprobs,
                disableLogStats);
    }

    public boolean simulated() {
        return model.startsWith("sim:");
    }

    public String servedName() {
        if (servedModelName != null) return servedModelName;
        return simulated() ? model.substring(4) : Path.of(model).getFileName().toString();
    }
}
