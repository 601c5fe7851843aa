package dev.patchbay.launcher.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One run of NVIDIA's aiperf (0.13.0) against an OpenAI-compatible server: the settings, the exact {@code aiperf
 * profile} command line they make ({@link #command()}), and running it ({@link #run}). {@link AiperfReport#read}
 * reads what it wrote.
 *
 * <p>The request stream is synthetic: prompts of {@code inputTokens} tokens cut from aiperf's corpus with the given
 * tokenizer, {@code max_tokens} of {@code outputTokens} and {@code ignore_eos} so every answer is that long, one model
 * (adapter) per request. aiperf 0.13.0 has no working weighted model choice (its {@code weighted} strategy passes
 * validation and then fails: "Invalid model selection strategy"), so the weights are made by naming each model as
 * many times as its weight in {@code -m}, interleaved, with {@code round-robin} choice: a dataset of a whole number of
 * such cycles holds every model in its exact share, and aiperf sends that dataset shuffled (without replacement), so
 * every pass through it keeps the shares. With the same {@link #seed} two runs send the same prompts to the same
 * models in the same order at the same offsets (within about a millisecond), whichever front they are sent to.
 *
 * @param executable      the {@code aiperf} program
 * @param baseUrl         the server or router, e.g. {@code http://127.0.0.1:8000} (aiperf adds the endpoint's path)
 * @param endpointType    completions or chat
 * @param streaming       stream the answers (time to first token is measured only when streaming)
 * @param models          the models (adapters) and their integer weights
 * @param tokenizer       a tokenizer directory ({@code tokenizer.json}; see {@link SimTokenizerFiles}) or an aiperf
 *                        name. aiperf's {@code builtin} is not offline: it downloads tiktoken's o200k_base file
 * @param inputTokens     prompt length in tokens (no spread)
 * @param outputTokens    answer length in tokens ({@code max_tokens}; with {@code ignore_eos} exact)
 * @param ignoreEos       send {@code "ignore_eos": true} so the server generates {@code outputTokens} every time
 * @param arrivals        the arrival process and its mean rate
 * @param duration        how long the measured phase issues requests, or null when {@code requestCount} ends it
 * @param gracePeriod     with a duration: how long answers in flight at its end are waited for and counted
 * @param requestCount    how many requests the measured phase sends (0 when a duration ends it)
 * @param warmupRequests  requests sent before the measured phase, at the same rate and arrival process, left out of
 *                        the results (0: no warm-up)
 * @param seed            aiperf's {@code --random-seed} (prompts, model order, arrival times), or null for none
 * @param datasetEntries  distinct requests aiperf makes up front (a multiple of the model cycle); 0 picks the
 *                        smallest multiple of the cycle that is at least {@value #MIN_DATASET_ENTRIES}
 * @param requestTimeout  a request not answered in this time fails (null: aiperf's default, six hours)
 * @param artifactDir     where aiperf writes its files, and this class its console log {@value #CONSOLE_LOG}
 * @param extraArgs       more aiperf arguments, appended as they are
 */
public record AiperfRun(
        Path executable,
        String baseUrl,
        EndpointType endpointType,
        boolean streaming,
        List<ModelShare> models,
        String tokenizer,
        int inputTokens,
        int outputTokens,
        boolean ignoreEos,
        Arrivals arrivals,
        Duration duration,
        Duration gracePeriod,
        int requestCount,
        int warmupRequests,
        Long seed,
        int datasetEntries,
        Duration requestTimeout,
        Path artifactDir,
        List<String> extraArgs) {

    /** The file in the artifact directory that aiperf's own console output goes to. */
    public static final String CONSOLE_LOG = "aiperf-console.log";

    static final int MIN_DATASET_ENTRIES = 500;

    /** aiperf's {@code --endpoint-type}. */
    public enum EndpointType {
        COMPLETIONS,
        CHAT;

        String flag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** A model (a base model or an adapter, as the server names it) and its share of the requests, by weight. */
    public record ModelShare(String name, int weight) {
        public ModelShare {
            if (name == null || name.isBlank() || name.contains(",")) {
                throw new IllegalArgumentException("a model name must be non-empty without commas: '" + name + "'");
            }
            if (weight < 1) {
                throw new IllegalArgumentException("weight of " + name + " must be at least 1, got " + weight);
            }
        }

        /**
         * The multi-LoRA workload of the Gateway API Inference Extension's benchmarks: 15 adapters, the first five
         * each 12% of the requests, the next five 6%, the last five 2%.
         */
        public static List<ModelShare> multiLoraMix(List<String> adapters) {
            if (adapters.size() != 15) {
                throw new IllegalArgumentException("the multi-LoRA mix has 15 adapters, got " + adapters.size());
            }
            List<ModelShare> shares = new ArrayList<>();
            for (int i = 0; i < 15; i++) {
                shares.add(new ModelShare(adapters.get(i), i < 5 ? 12 : i < 10 ? 6 : 2));
            }
            return List.copyOf(shares);
        }
    }

    /**
     * How requests arrive: aiperf's {@code --arrival-pattern} and {@code --request-rate}; for gamma also
     * {@code --arrival-smoothness}, the gamma shape (1 is Poisson, below 1 bursty, above 1 smoother; vLLM's
     * {@code --burstiness}). The gaps between arrivals then have a coefficient of variation of 1/sqrt(smoothness).
     */
    public record Arrivals(Pattern pattern, double rate, double smoothness) {
        public enum Pattern {
            POISSON,
            GAMMA,
            CONSTANT
        }

        public Arrivals {
            Objects.requireNonNull(pattern, "pattern");
            if (!(rate > 0) || Double.isInfinite(rate)) {
                throw new IllegalArgumentException("request rate must be positive, got " + rate);
            }
            if (pattern == Pattern.GAMMA && !(smoothness > 0)) {
                throw new IllegalArgumentException("gamma smoothness must be positive, got " + smoothness);
            }
        }

        public static Arrivals poisson(double rate) {
            return new Arrivals(Pattern.POISSON, rate, 1);
        }

        /** Gamma-distributed gaps; {@code smoothness} below 1 is bursty (0.25: gaps with a CV of 2). */
        public static Arrivals gamma(double rate, double smoothness) {
            return new Arrivals(Pattern.GAMMA, rate, smoothness);
        }

        /** A fixed gap of 1/rate. */
        public static Arrivals constant(double rate) {
            return new Arrivals(Pattern.CONSTANT, rate, 1);
        }
    }

    public AiperfRun {
        Objects.requireNonNull(executable, "executable");
        Objects.requireNonNull(baseUrl, "baseUrl");
        Objects.requireNonNull(endpointType, "endpointType");
        Objects.requireNonNull(tokenizer, "tokenizer");
        Objects.requireNonNull(arrivals, "arrivals");
        Objects.requireNonNull(artifactDir, "artifactDir");
        models = List.copyOf(models);
        extraArgs = List.copyOf(extraArgs);
        if (models.isEmpty()) {
            throw new IllegalArgumentException("at least one model is needed");
        }
        if (inputTokens < 1 || outputTokens < 1) {
            throw new IllegalArgumentException(
                    "input and output tokens must be at least 1, got " + inputTokens + " and " + outputTokens);
        }
        if ((duration == null) == (requestCount <= 0)) {
            throw new IllegalArgumentException("give either a duration or a request count, not both or neither");
        }
        if (duration != null && (duration.isNegative() || duration.isZero())) {
            throw new IllegalArgumentException("duration must be positive, got " + duration);
        }
        if (gracePeriod != null && gracePeriod.isNegative()) {
            throw new IllegalArgumentException("grace period must not be negative, got " + gracePeriod);
        }
        if (warmupRequests < 0) {
            throw new IllegalArgumentException("warm-up requests must not be negative, got " + warmupRequests);
        }
        if (datasetEntries < 0) {
            throw new IllegalArgumentException("dataset entries must not be negative, got " + datasetEntries);
        }
        if (datasetEntries > 0 && datasetEntries % modelCycle(models).size() != 0) {
            throw new IllegalArgumentException("dataset entries (" + datasetEntries
                    + ") must be a multiple of the model cycle ("
                    + modelCycle(models).size()
                    + ") for the weights to hold exactly");
        }
        if (requestTimeout != null && (requestTimeout.isNegative() || requestTimeout.isZero())) {
            throw new IllegalArgumentException("request timeout must be positive, got " + requestTimeout);
        }
    }

    public static Builder builder(Path executable, String baseUrl, Path artifactDir) {
        return new Builder(executable, baseUrl, artifactDir);
    }

    public Builder toBuilder() {
        Builder b = new Builder(executable, baseUrl, artifactDir);
        b.endpointType = endpointType;
        b.streaming = streaming;
        b.models = new ArrayList<>(models);
        b.tokenizer = tokenizer;
        b.inputTokens = inputTokens;
        b.outputTokens = outputTokens;
        b.ignoreEos = ignoreEos;
        b.arrivals = arrivals;
        b.duration = duration;
        b.gracePeriod = gracePeriod;
        b.requestCount = requestCount;
        b.warmupRequests = warmupRequests;
        b.seed = seed;
        b.datasetEntries = datasetEntries;
        b.requestTimeout = requestTimeout;
        b.extraArgs = new ArrayList<>(extraArgs);
        return b;
    }

    /**
     * One cycle of model names in which each appears as often as its weight over the weights' greatest common
     * divisor, spread out (smooth weighted round-robin: each step takes the name furthest behind its share; ties to
     * the one listed first). 12/6/2 over 15 adapters is a cycle of 50.
     */
    public static List<String> modelCycle(List<ModelShare> models) {
        int gcd = 0;
        for (ModelShare m : models) gcd = gcd(gcd, m.weight());
        int[] weights = new int[models.size()];
        int total = 0;
        for (int i = 0; i < weights.length; i++) {
            weights[i] = models.get(i).weight() / gcd;
            total += weights[i];
        }
        int[] current = new int[weights.length];
        List<String> cycle = new ArrayList<>(total);
        for (int step = 0; step < total; step++) {
            int best = 0;
            for (int i = 0; i < weights.length; i++) {
                current[i] += weights[i];
                if (current[i] > current[best]) best = i;
            }
            current[best] -= total;
            cycle.add(models.get(best).name());
        }
        return List.copyOf(cycle);
    }

    private static int gcd(int a, int b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /** The dataset size passed as {@code --num-dataset-entries}: {@link #datasetEntries}, or its default. */
    public int effectiveDatasetEntries() {
        if (datasetEntries > 0) return datasetEntries;
        int cycle = modelCycle(models).size();
        return cycle * ((MIN_DATASET_ENTRIES + cycle - 1) / cycle);
    }

    /** The whole command line: the executable, {@code profile}, then the flags. */
    public List<String> command() {
        List<String> c = new ArrayList<>();
        c.add(executable.toString());
        c.add("profile");
        c.addAll(List.of("--url", baseUrl, "--endpoint-type", endpointType.flag()));
        if (streaming) c.add("--streaming");
        c.addAll(List.of("-m", String.join(",", modelCycle(models)), "--model-selection-strategy", "round-robin"));
        c.addAll(List.of("--tokenizer", tokenizer));
        c.addAll(List.of("--isl", Integer.toString(inputTokens), "--osl", Integer.toString(outputTokens)));
        if (ignoreEos) c.addAll(List.of("--extra-inputs", "ignore_eos:true"));
        c.addAll(List.of(
                "--num-dataset-entries",
                Integer.toString(effectiveDatasetEntries()),
                "--dataset-sampling-strategy",
                "shuffle"));
        c.addAll(List.of(
                "--request-rate",
                number(arrivals.rate()),
                "--arrival-pattern",
                arrivals.pattern().name().toLowerCase(Locale.ROOT)));
        if (arrivals.pattern() == Arrivals.Pattern.GAMMA) {
            c.addAll(List.of("--arrival-smoothness", number(arrivals.smoothness())));
        }
        if (duration != null) {
            c.addAll(List.of("--benchmark-duration", number(duration.toMillis() / 1000.0)));
            if (gracePeriod != null) {
                c.addAll(List.of("--benchmark-grace-period", number(gracePeriod.toMillis() / 1000.0)));
            }
        } else {
            c.addAll(List.of("--request-count", Integer.toString(requestCount)));
        }
        if (warmupRequests > 0) c.addAll(List.of("--warmup-request-count", Integer.toString(warmupRequests)));
        if (seed != null) c.addAll(List.of("--random-seed", Long.toString(seed)));
        if (requestTimeout != null) {
            c.addAll(List.of("--request-timeout-seconds", number(requestTimeout.toMillis() / 1000.0)));
        }
        c.addAll(List.of("--artifact-dir", artifactDir.toString()));
        // The lightest aiperf: no dashboard, no scraping of the server's /metrics, no GPU telemetry, no plots.
        c.addAll(List.of("--ui", "none", "--no-server-metrics", "--no-gpu-telemetry", "--no-auto-plot"));
        c.addAll(extraArgs);
        return List.copyOf(c);
    }

    private static String number(double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e15) return Long.toString((long) value);
        return Double.toString(value);
    }

    /**
     * A bound on the run's wall time: aiperf's start and end (10-15 s on two cores, more when they are busy), the
     * warm-up, and the measured phase with its grace period, or a count at the mean rate twice over.
     */
    public Duration defaultTimeout() {
        double seconds = 120 + 2 * warmupRequests / arrivals.rate();
        if (duration != null) {
            seconds += duration.toMillis() / 1000.0 + (gracePeriod == null ? 30 : gracePeriod.toMillis() / 1000.0);
        } else {
            seconds += 2 * requestCount / arrivals.rate() + 60;
        }
        return Duration.ofMillis((long) (seconds * 1000));
    }

    /** {@link #run(Duration)} with {@link #defaultTimeout()}. */
    public Path run() throws IOException, InterruptedException {
        return run(defaultTimeout());
    }

    /**
     * Runs aiperf and waits for it to end; its console output goes to {@value #CONSOLE_LOG} in the artifact
     * directory. The directory must not hold an earlier run's results. Fails with the exit code and the log's last
     * lines when aiperf exits non-zero, and stops aiperf and its worker processes when {@code timeout} passes first.
     * aiperf exits 0 when requests failed: {@link AiperfReport#errors()} counts them.
     *
     * @return the artifact directory
     */
    public Path run(Duration timeout) throws IOException, InterruptedException {
        Files.createDirectories(artifactDir);
        if (Files.exists(artifactDir.resolve(AiperfReport.SUMMARY))) {
            throw new IOException(artifactDir + " already holds an aiperf run (" + AiperfReport.SUMMARY + ")");
        }
        ProcessBuilder builder = new ProcessBuilder(command());
        Map<String, String> env = builder.environment();
        // aiperf 0.13.0 in Hugging Face's offline mode takes a tokenizer directory for a hub name and fails to load
        // it; without it a directory loads from disk with no network access.
        env.remove("HF_HUB_OFFLINE");
        env.remove("TRANSFORMERS_OFFLINE");
        ToolProcess.run(builder, artifactDir.resolve(CONSOLE_LOG), timeout, "aiperf");
        return artifactDir;
    }

    /** Named settings for an {@link AiperfRun}; the defaults are the benchmark's usual ones. */
    public static final class Builder {
        private final Path executable;
        private final String baseUrl;
        private final Path artifactDir;
        private EndpointType endpointType = EndpointType.COMPLETIONS;
        private boolean streaming = true;
        private List<ModelShare> models = new ArrayList<>();
        private String tokenizer;
        private int inputTokens = 128;
        private int outputTokens = 32;
        private boolean ignoreEos = true;
        private Arrivals arrivals = Arrivals.poisson(10);
        private Duration duration;
        private Duration gracePeriod;
        private int requestCount;
        private int warmupRequests;
        private Long seed;
        private int datasetEntries;
        private Duration requestTimeout;
        private List<String> extraArgs = new ArrayList<>();

        private Builder(Path executable, String baseUrl, Path artifactDir) {
            this.executable = executable;
            this.baseUrl = baseUrl;
            this.artifactDir = artifactDir;
        }

        public Builder endpointType(EndpointType value) {
            endpointType = value;
            return this;
        }

        public Builder streaming(boolean value) {
            streaming = value;
            return this;
        }

        /** Adds a model with its weight. */
        public Builder model(String name, int weight) {
            models.add(new ModelShare(name, weight));
            return this;
        }

        /** Replaces the models. */
        public Builder models(List<ModelShare> value) {
            models = new ArrayList<>(value);
            return this;
        }

        /** A tokenizer directory, e.g. one {@link SimTokenizerFiles#write} made. */
        public Builder tokenizer(Path dir) {
            tokenizer = dir.toString();
            return this;
        }

        /** An aiperf tokenizer name ({@code builtin} needs the network once to fetch tiktoken's file). */
        public Builder tokenizer(String name) {
            tokenizer = name;
            return this;
        }

        public Builder inputTokens(int value) {
            inputTokens = value;
            return this;
        }

        public Builder outputTokens(int value) {
            outputTokens = value;
            return this;
        }

        public Builder ignoreEos(boolean value) {
            ignoreEos = value;
            return this;
        }

        public Builder arrivals(Arrivals value) {
            arrivals = value;
            return this;
        }

        /** The measured phase issues requests for {@code value}; answers are waited for {@code grace} after. */
        public Builder duration(Duration value, Duration grace) {
            duration = value;
            gracePeriod = grace;
            requestCount = 0;
            return this;
        }

        /** The measured phase sends {@code value} requests and waits for all their answers. */
        public Builder requestCount(int value) {
            requestCount = value;
            duration = null;
            gracePeriod = null;
            return this;
        }

        public Builder warmupRequests(int value) {
            warmupRequests = value;
            return this;
        }

        public Builder seed(long value) {
            seed = value;
            return this;
        }

        public Builder datasetEntries(int value) {
            datasetEntries = value;
            return this;
        }

        public Builder requestTimeout(Duration value) {
            requestTimeout = value;
            return this;
        }

        public Builder extraArgs(List<String> value) {
            extraArgs = new ArrayList<>(value);
            return this;
        }

        public AiperfRun build() {
            if (tokenizer == null) {
                throw new IllegalArgumentException("a tokenizer is needed (a directory, e.g. SimTokenizerFiles.write)");
            }
            return new AiperfRun(
                    executable,
                    baseUrl,
                    endpointType,
                    streaming,
                    models,
                    tokenizer,
                    inputTokens,
                    outputTokens,
                    ignoreEos,
                    arrivals,
                    duration,
                    gracePeriod,
                    requestCount,
                    warmupRequests,
                    seed,
                    datasetEntries,
                    requestTimeout,
                    artifactDir,
                    extraArgs);
        }
    }
}
