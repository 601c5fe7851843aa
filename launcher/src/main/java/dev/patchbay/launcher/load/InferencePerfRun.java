package dev.patchbay.launcher.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import dev.patchbay.launcher.load.AiperfRun.Arrivals;
import dev.patchbay.launcher.load.AiperfRun.ModelShare;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One run of the Kubernetes project's inference-perf (0.7.0), the load tool the Gateway API Inference Extension
 * benchmarks with, against an OpenAI-compatible server: the settings, the configuration file they make ({@link
 * #config()}), and running it ({@link #run}). {@link InferencePerfReport#read} reads what it wrote.
 *
 * <p>The request stream is inference-perf's {@code synthetic} data: prompts of exactly {@code inputTokens} tokens cut
 * from its Shakespeare corpus with the given tokenizer, streamed completions of {@code max_tokens} {@code
 * outputTokens} with {@code ignore_eos}, each request's adapter drawn at random in the shares of {@code models}
 * ({@code load.lora_traffic_split}), as the gateway's multi-LoRA benchmark sends them. One stage of {@code
 * floor(rate x seconds)} requests: inference-perf plans exactly that many; a prompt it cannot cut to the exact length
 * in 20 tries is never sent and appears nowhere in its reports ({@link InferencePerfReport#unsent} counts them).
 *
 * <p>Where it differs from aiperf: only Poisson and constant arrivals (no gamma), whole seconds, and its arrival times
 * are not seeded ({@code base_seed} seeds the adapter draw and the prompts, not the timer), so two runs differ in
 * their arrival offsets though not in their rate. Its "Poisson" draws a Poisson count for each second and spreads
 * that many requests over the second.
 *
 * @param executable   the {@code inference-perf} program
 * @param baseUrl      the server or router, e.g. {@code http://127.0.0.1:8000}
 * @param baseModel    the served base model ({@code server.model_name}; the requests for no adapter name it)
 * @param models       adapters and their integer weights; empty: every request is for the base model
 * @param tokenizer    a tokenizer directory ({@code tokenizer.json}; see {@link SimTokenizerFiles})
 * @param inputTokens  prompt length in tokens (no spread)
 * @param outputTokens answer length in tokens ({@code max_tokens}, with {@code ignore_eos})
 * @param arrivals     Poisson or constant, and the mean rate
 * @param duration     the stage, in whole seconds
 * @param seed         {@code load.base_seed}
 * @param artifactDir  where inference-perf writes its reports, and this class the configuration ({@value #CONFIG})
 *                     and inference-perf's console output ({@value #CONSOLE_LOG})
 */
public record InferencePerfRun(
        Path executable,
        String baseUrl,
        String baseModel,
        List<ModelShare> models,
        Path tokenizer,
        int inputTokens,
        int outputTokens,
        Arrivals arrivals,
        Duration duration,
        long seed,
        Path artifactDir) {

    /** The version {@code scripts/perf-requirements.txt} pins. */
    public static final String VERSION = "0.7.0";

    public static final String CONFIG = "inference-perf-config.yaml";
    public static final String CONSOLE_LOG = "inference-perf-console.log";

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));

    public InferencePerfRun {
        Objects.requireNonNull(executable, "executable");
        Objects.requireNonNull(baseUrl, "baseUrl");
        Objects.requireNonNull(baseModel, "baseModel");
        Objects.requireNonNull(tokenizer, "tokenizer");
        Objects.requireNonNull(arrivals, "arrivals");
        Objects.requireNonNull(duration, "duration");
        Objects.requireNonNull(artifactDir, "artifactDir");
        models = List.copyOf(models);
        checkStage(arrivals, duration);
        if (inputTokens < 1 || outputTokens < 1) {
            throw new IllegalArgumentException(
                    "input and output tokens must be at least 1, got " + inputTokens + " and " + outputTokens);
        }
    }

    /** Refuses a stage inference-perf cannot run: gamma arrivals, part seconds, or under one request in all. */
    public static void checkStage(Arrivals arrivals, Duration duration) {
        if (arrivals.pattern() == Arrivals.Pattern.GAMMA) {
            throw new IllegalArgumentException("inference-perf has Poisson and constant arrivals, not gamma");
        }
        if (duration.toMillis() % 1000 != 0 || duration.toSeconds() < 1) {
            throw new IllegalArgumentException("inference-perf runs a stage for whole seconds, got " + duration);
        }
        if (plannedRequests(arrivals, duration) < 1) {
            throw new IllegalArgumentException("rate x seconds is under one request: inference-perf would send none ("
                    + arrivals.rate() + "/s for " + duration.toSeconds() + " s)");
        }
    }

    /** The requests inference-perf plans for a stage: {@code int(rate * duration)}, as it computes them. */
    public static int plannedRequests(Arrivals arrivals, Duration duration) {
        return (int) (arrivals.rate() * duration.toSeconds());
    }

    public int plannedRequests() {
        return plannedRequests(arrivals, duration);
    }

    /**
     * Each model's share as inference-perf reads it: weight over total, the last share nudged by ulps until the
     * shares sum to exactly 1.0 as Python 3.12+'s {@code sum()} adds floats ({@link #pythonSum}): inference-perf
     * refuses a split whose sum is not 1.0, and a plain left-to-right sum is not Python's (the gateway's 15 shares of
     * 12%, 6% and 2% add up to 1.0000000000000002 left to right and to 1.0 in Python).
     */
    public static double[] splits(List<ModelShare> models) {
        int total = models.stream().mapToInt(ModelShare::weight).sum();
        double[] splits = new double[models.size()];
        for (int i = 0; i < splits.length; i++) {
            splits[i] = (double) models.get(i).weight() / total;
        }
        int last = splits.length - 1;
        for (int tries = 0; tries < 64 && pythonSum(splits) != 1.0; tries++) {
            splits[last] = pythonSum(splits) < 1.0 ? Math.nextUp(splits[last]) : Math.nextDown(splits[last]);
        }
        if (pythonSum(splits) != 1.0) {
            throw new IllegalStateException("no split of " + models + " sums to 1.0"); // not seen for integer weights
        }
        return splits;
    }

    /**
     * CPython 3.12+'s {@code sum()} of floats from 0: Neumaier's compensated summation, the running compensation
     * added at the end (Objects/bltinmodule.c, builtin_sum_impl).
     */
    static double pythonSum(double[] values) {
        double sum = 0, compensation = 0;
        for (double x : values) {
            double t = sum + x;
            compensation += Math.abs(sum) >= Math.abs(x) ? (sum - t) + x : (x - t) + sum;
            sum = t;
        }
        return compensation != 0 && Double.isFinite(compensation) ? sum + compensation : sum;
    }

    /** The configuration file's content. */
    public String config() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("api", Map.of("type", "completion", "streaming", true));
        Map<String, Object> server = new LinkedHashMap<>();
        server.put("type", "vllm");
        server.put("model_name", baseModel);
        server.put("base_url", baseUrl);
        server.put("ignore_eos", true);
        root.put("server", server);
        root.put("tokenizer", Map.of("pretrained_model_name_or_path", tokenizer.toString()));
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("type", "synthetic");
        data.put("input_distribution", fixed(inputTokens));
        data.put("output_distribution", fixed(outputTokens));
        root.put("data", data);
        Map<String, Object> load = new LinkedHashMap<>();
        load.put("type", arrivals.pattern().name().toLowerCase(Locale.ROOT));
        load.put("base_seed", seed);
        load.put("stages", List.of(Map.of("rate", arrivals.rate(), "duration", duration.toSeconds())));
        if (!models.isEmpty()) {
            double[] splits = splits(models);
            List<Map<String, Object>> split = new ArrayList<>();
            for (int i = 0; i < splits.length; i++) {
                split.add(Map.of("name", models.get(i).name(), "split", splits[i]));
            }
            load.put("lora_traffic_split", split);
        }
        root.put("load", load);
        // Per request: its adapter, times and TTFT, without the prompt and answer text.
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("request", false);
        fields.put("response", false);
        fields.put("info", true);
        fields.put("response_chunks", false);
        fields.put("computed_metrics", true);
        Map<String, Object> lifecycle = new LinkedHashMap<>();
        lifecycle.put("summary", true);
        lifecycle.put("per_stage", false);
        lifecycle.put("per_request", true);
        lifecycle.put("per_request_fields", fields);
        lifecycle.put("per_adapter", !models.isEmpty());
        root.put("report", Map.of("request_lifecycle", lifecycle));
        root.put("storage", Map.of("local_storage", Map.of("path", artifactDir.toString())));
        try {
            return YAML.writeValueAsString(root);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Map<String, Object> fixed(int tokens) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("type", "fixed");
        d.put("min", tokens);
        d.put("max", tokens);
        d.put("mean", tokens);
        return d;
    }

    public List<String> command() {
        return List.of(executable.toString(), "-c", artifactDir.resolve(CONFIG).toString());
    }

    /** The stage, the 120 s inference-perf grants answers in flight at its end, and two minutes for the rest. */
    public Duration defaultTimeout() {
        return duration.plusSeconds(240);
    }

    public Path run() throws IOException, InterruptedException {
        return run(defaultTimeout());
    }

    /**
     * Writes the configuration, runs inference-perf to its end and returns the artifact directory. Fails with the
     * exit code and the log's last lines when inference-perf exits non-zero or overruns {@code timeout} (then it and
     * its worker processes are stopped).
     */
    public Path run(Duration timeout) throws IOException, InterruptedException {
        Files.createDirectories(artifactDir);
        if (Files.exists(artifactDir.resolve(InferencePerfReport.SUMMARY))) {
            throw new IOException(
                    artifactDir + " already holds an inference-perf run (" + InferencePerfReport.SUMMARY + ")");
        }
        Files.writeString(artifactDir.resolve(CONFIG), config(), StandardCharsets.UTF_8);
        ProcessBuilder builder = new ProcessBuilder(command());
        // The tokenizer is a local directory: no hub lookups.
        builder.environment().put("HF_HUB_OFFLINE", "1");
        ToolProcess.run(builder, artifactDir.resolve(CONSOLE_LOG), timeout, "inference-perf");
        return artifactDir;
    }
}
