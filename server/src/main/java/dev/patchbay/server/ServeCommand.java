package dev.patchbay.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimulatedExecutor;
import dev.patchbay.model.KvCacheBudget;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code patchbay serve}: the OpenAI-compatible model server, with vLLM's flags. */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = "Serve a model and its LoRA adapters over the OpenAI API (vLLM-compatible flags).")
public final class ServeCommand implements Callable<Integer> {
    public static final String DEFAULT_MODEL = "sim:patchbay-sim";

    @Option(
            names = "--model",
            description = "Model directory, or sim:<name> for the simulated model (default: ${DEFAULT-VALUE}).")
    String model = DEFAULT_MODEL;

    @Option(names = "--served-model-name", description = "Name of the base model in the API.")
    String servedModelName;

    @Option(names = "--host", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String host = "0.0.0.0";

    @Option(names = "--port", description = "Port (default: ${DEFAULT-VALUE}).")
    int port = 8000;

    @Option(names = "--api-key", description = "Require 'Authorization: Bearer <key>' on /v1 routes.")
    String apiKey;

    @Option(names = "--enable-lora", description = "Serve LoRA adapters (on by default for the simulated model).")
    Boolean enableLora;

    @Option(names = "--max-loras", description = "Adapters in one batch: batch slots (default: 1; 2 for the demo).")
    Integer maxLoras;

    @Option(
            names = "--max-cpu-loras",
            description = "Adapters kept in host memory; >= --max-loras (default: --max-loras).")
    Integer maxCpuLoras;

    @Option(
            names = "--max-lora-rank",
            description = "Largest adapter rank: 1, 8, 16, 32, 64, 128, 256, 320 or 512 (default: ${DEFAULT-VALUE}).")
    int maxLoraRank = 16;

    @Option(names = "--lora-dtype", description = "auto, float16 or bfloat16 (default: ${DEFAULT-VALUE}).")
    String loraDtype = "auto";

    @Option(
            names = "--lora-modules",
            arity = "1..*",
            description = "name=path, or JSON {\"name\",\"path\",\"base_model_name\"}; repeatable.")
    List<String> loraModules = new ArrayList<>();

    @Option(names = "--max-num-seqs", description = "Running requests at most (default: ${DEFAULT-VALUE}).")
    int maxNumSeqs = 256;

    @Option(names = "--max-num-batched-tokens", description = "Tokens per step at most (default: ${DEFAULT-VALUE}).")
    int maxNumBatchedTokens = 8192;

    @Option(names = "--max-model-len", description = "Prompt plus output tokens at most (default: the model's).")
    Integer maxModelLen;

    @Option(names = "--block-size", description = "Tokens per KV block (default: ${DEFAULT-VALUE}).")
    int blockSize = 16;

    @Option(names = "--enable-prefix-caching", description = "Reuse KV blocks of identical prompt prefixes.")
    boolean enablePrefixCaching;

    @Option(
            names = "--num-gpu-blocks-override",
            description = "KV cache blocks; wins over the memory flags"
                    + " (default: sized from memory for a model directory, " + PatchbayServer.SIMULATED_KV_BLOCKS
                    + " for the simulated model).")
    Integer numGpuBlocks;

    @Option(
            names = "--gpu-memory-utilization",
            description = "Share of the JVM's max heap (-Xmx) for the model's weights,"
                    + " one step's activations and the KV cache, which gets what is left (default: ${DEFAULT-VALUE}).")
    double gpuMemoryUtilization = 0.9;

    @Option(
            names = "--kv-cache-memory-bytes",
            description = "KV cache size, as 2GiB, 512M or 1.5g; wins over" + " --gpu-memory-utilization.")
    String kvCacheMemoryBytes;

    @Option(names = "--show-hidden-metrics-for-version", description = "Show metrics hidden since this version (X.Y).")
    String showHiddenMetricsForVersion;

    @Option(
            names = "--allow-runtime-lora-updating",
            description = "Enable /v1/load_lora_adapter and /v1/unload_lora_adapter"
                    + " (also VLLM_ALLOW_RUNTIME_LORA_UPDATING=true).")
    boolean allowRuntimeLoraUpdating;

    @Option(names = "--lora-resolver-dir", description = "Load an unknown adapter <name> from DIR/<name> on first use.")
    Path loraResolverDir;

    @Option(
            names = "--lora-allowed-dirs",
            split = ",",
            description = "Directories adapter paths must lie under"
                    + " (default: the working directory, the resolver directory and those of --lora-modules).")
    List<Path> loraAllowedDirs = new ArrayList<>();

    @Option(
            names = "--max-lora-metric-series",
            description = "Adapters with their own metric series (default: ${DEFAULT-VALUE}).")
    int maxLoraMetricSeries = 1000;

    @Option(names = "--enable-lora-latency-metrics", description = "Per-adapter TTFT and e2e histograms.")
    boolean enableLoraLatencyMetrics;

    @Option(
            names = "--max-waiting-requests",
            description = "Queued requests at most; more get 429 (default: ${DEFAULT-VALUE}).")
    int maxWaitingRequests = 10_000;

    @Option(names = "--max-request-body-bytes", description = "Largest request body (default: ${DEFAULT-VALUE}).")
    long maxRequestBodyBytes = 8L * 1024 * 1024;

    @Option(
            names = "--max-logprobs",
            description = "Most log probabilities a request may ask for per token, -1 for"
                    + " no limit (default: ${DEFAULT-VALUE}).")
    int maxLogprobs = 20;

    @Option(
            names = "--disable-log-stats",
            description = "Do not log the stats line (throughput, running and waiting"
                    + " requests, KV cache usage, adapters in slots, adapter loads), written every 10 s while requests are in"
                    + " flight or something changed.")
    boolean disableLogStats;

    @Option(names = "--seed", description = "Seed of the engine's random streams (default: ${DEFAULT-VALUE}).")
    long seed = 0;

    @Option(
            names = "--sim-latency-ms",
            split = ",",
            description =
                    "Simulated model: step overhead, per prefill token,"
                            + " per decode sequence, per adapter, load from disk, load into slot, in ms (default: 5,0.1,0.2,0.5,80,3).")
    List<Double> simLatency;

    @Option(names = "--sim-text", description = "Simulated model's text: random or echo (default: ${DEFAULT-VALUE}).")
    String simText = "random";

    @Option(
            names = "--sim-eos-probability",
            description = "Simulated model: chance a token ends the text (default: ${DEFAULT-VALUE}).")
    double simEosProbability = 0.02;

    @Option(
            names = "--demo-adapters",
            description = "Demo adapters to write and serve (default: 3 with the default model, else 0).")
    Integer demoAdapters;

    @Option(
            names = "--shutdown-grace-seconds",
            description = "On SIGTERM, wait this long for requests in flight (default: ${DEFAULT-VALUE}).")
    double shutdownGraceSeconds = 30;

    /** Parses flags into options; throws IllegalArgumentException with one clear line on a bad value. */
    public static ServerOptions parse(String... args) {
        ServeCommand c = new ServeCommand();
        try {
            new CommandLine(c).parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
        return c.options();
    }

    ServerOptions options() {
        boolean defaultModel = model.equals(DEFAULT_MODEL);
        boolean sim = model.startsWith("sim:");
        if (sim && model.length() <= 4) throw new IllegalArgumentException("--model sim:<name> needs a name");
        int demos = demoAdapters != null ? demoAdapters : (defaultModel && loraModules.isEmpty() ? 3 : 0);
        if (demos < 0) throw new IllegalArgumentException("--demo-adapters must be >= 0");
        boolean lora = enableLora != null ? enableLora : sim;
        int slots = maxLoras != null ? maxLoras : (demos > 0 ? 2 : 1);
        Integer cpu =
                maxCpuLoras != null ? maxCpuLoras : (demos > 0 ? Integer.valueOf(Math.max(slots, demos + 1)) : null);
        boolean runtime = allowRuntimeLoraUpdating
                || "true".equalsIgnoreCase(System.getenv("VLLM_ALLOW_RUNTIME_LORA_UPDATING"))
                || "1".equals(System.getenv("VLLM_ALLOW_RUNTIME_LORA_UPDATING"));
        if (!List.of("auto", "float16", "bfloat16").contains(loraDtype)) {
            throw new IllegalArgumentException("--lora-dtype must be auto, float16 or bfloat16, got " + loraDtype);
        }
        if (maxLogprobs < -1) throw new IllegalArgumentException("--max-logprobs must be >= -1, got " + maxLogprobs);
        if (port < 0 || port > 65535) throw new IllegalArgumentException("--port must be in [0, 65535], got " + port);
        LatencyModel latency = LatencyModel.DEFAULT;
        if (simLatency != null) {
            if (simLatency.size() != 6)
                throw new IllegalArgumentException("--sim-latency-ms needs 6 comma-separated numbers");
            latency = LatencyModel.ofMillis(
                    simLatency.get(0),
                    simLatency.get(1),
                    simLatency.get(2),
                    simLatency.get(3),
                    simLatency.get(4),
                    simLatency.get(5));
        }
        SimulatedExecutor.TextMode text;
        try {
            text = SimulatedExecutor.TextMode.valueOf(simText.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--sim-text must be random or echo, got " + simText);
        }
        if (!(gpuMemoryUtilization > 0 && gpuMemoryUtilization <= 1)) {
            throw new IllegalArgumentException(
                    "--gpu-memory-utilization must be in (0, 1], got " + gpuMemoryUtilization);
        }
        if (numGpuBlocks != null && numGpuBlocks < 1) {
            throw new IllegalArgumentException("--num-gpu-blocks-override must be at least 1, got " + numGpuBlocks);
        }
        Long kvBytes = null;
        if (kvCacheMemoryBytes != null) {
            try {
                kvBytes = KvCacheBudget.parseSize(kvCacheMemoryBytes);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--kv-cache-memory-bytes: " + e.getMessage());
            }
            if (kvBytes < 1)
                throw new IllegalArgumentException(
                        "--kv-cache-memory-bytes must be positive, got " + kvCacheMemoryBytes);
        }
        List<ServerOptions.LoraModule> modules = new ArrayList<>();
        for (String m : loraModules) modules.add(parseLoraModule(m));
        if (!modules.isEmpty() && !lora) throw new IllegalArgumentException("--lora-modules needs --enable-lora");
        return new ServerOptions(
                model,
                servedModelName,
                host,
                port,
                apiKey,
                lora,
                slots,
                cpu,
                maxLoraRank,
                loraDtype,
                modules,
                maxNumSeqs,
                maxNumBatchedTokens,
                maxModelLen,
                blockSize,
                enablePrefixCaching,
                numGpuBlocks,
                gpuMemoryUtilization,
                kvBytes,
                showHiddenMetricsForVersion,
                runtime,
                loraResolverDir,
                List.copyOf(loraAllowedDirs),
                maxLoraMetricSeries,
                enableLoraLatencyMetrics,
                maxWaitingRequests,
                maxRequestBodyBytes,
                seed,
                latency,
                text,
                simEosProbability,
                demos,
                shutdownGraceSeconds,
                null,
                maxLogprobs,
                disableLogStats);
    }

    /** A message on one line: parsers' messages may quote the offending input on further lines. */
    static String oneLine(String message) {
        return message == null ? "" : message.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    /** vLLM's rule: an item with '=' and no ',' is name=path; anything else is JSON. */
    static ServerOptions.LoraModule parseLoraModule(String item) {
        if (item.contains("=") && !item.contains(",") && !item.trim().startsWith("{")) {
            int eq = item.indexOf('=');
            String name = item.substring(0, eq).trim();
            String path = item.substring(eq + 1).trim();
            if (name.isEmpty() || path.isEmpty())
                throw new IllegalArgumentException("Invalid --lora-modules entry: " + item);
            return new ServerOptions.LoraModule(name, Path.of(path), null);
        }
        JsonNode n;
        try {
            n = new ObjectMapper().readTree(item);
        } catch (Exception e) {
            throw new IllegalArgumentException("Invalid JSON format for --lora-modules: " + item);
        }
        if (n == null || !n.isObject() || !n.hasNonNull("name") || !n.hasNonNull("path")) {
            throw new IllegalArgumentException(
                    "Invalid fields for --lora-modules: " + item + " (needs \"name\" and \"path\")");
        }
        var extra = new ArrayList<String>();
        n.fieldNames().forEachRemaining(f -> {
            if (!List.of("name", "path", "base_model_name").contains(f)) extra.add(f);
        });
        if (!extra.isEmpty()) throw new IllegalArgumentException("Invalid fields for --lora-modules: " + extra);
        return new ServerOptions.LoraModule(
                n.get("name").asText(),
                Path.of(n.get("path").asText()),
                n.hasNonNull("base_model_name") ? n.get("base_model_name").asText() : null);
    }

    @Override
    public Integer call() throws Exception {
        ServerOptions options;
        PatchbayServer server;
        try {
            options = options();
            server = PatchbayServer.start(options);
        } catch (IllegalArgumentException | PatchbayServer.StartupException e) {
            System.err.println("patchbay serve: " + oneLine(e.getMessage()));
            return 2;
        } catch (RuntimeException e) {
            // Whatever start-up did not foresee still gets one line, not a stack trace.
            System.err.println("patchbay serve: cannot start: " + oneLine(e.toString()));
            return 2;
        }
        server.printWelcome(System.out);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            server.stopGracefully(Duration.ofMillis((long) (options.shutdownGraceSeconds() * 1000)));
                            stopped.countDown();
                        },
                        "patchbay-shutdown"));
        stopped.await();
        return 0;
    }
}
