package dev.patchbay.launcher.peers;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import dev.patchbay.launcher.field.FieldTools;
import dev.patchbay.launcher.fleet.ServerPages;
import dev.patchbay.launcher.fleet.SimFleet;
import dev.patchbay.launcher.load.AiperfReport;
import dev.patchbay.launcher.load.AiperfRun;
import dev.patchbay.launcher.load.InferencePerfReport;
import dev.patchbay.launcher.load.InferencePerfRun;
import dev.patchbay.launcher.load.LoadReport;
import dev.patchbay.launcher.load.LoadTool;
import dev.patchbay.launcher.load.SimTokenizerFiles;
import dev.patchbay.launcher.load.Ttft;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * The same request stream, from the field's load tool, through each routing setup in front of the same kind of
 * fleet: a fresh fleet per setup (every setup starts with cold servers), the added latency measured on it idle, a
 * warm-up, then the stages. Results are written after every stage, so that a long run shows progress and an
 * interrupted one keeps what it measured.
 */
public final class PeersBench {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /** One stage of the stream: an arrival process at a rate, for a while. */
    public record Stage(
            String name,
            AiperfRun.Arrivals arrivals,
            @JsonSerialize(using = ToStringSerializer.class) Duration duration) {}

    /**
     * @param fleet        the servers behind every setup
     * @param setups       the setups, in the order they run
     * @param stages       the stages every setup gets
     * @param operating    the stage at the operating rate: the warm-up runs at its arrivals, and the 2x target is
     *                     judged at it when it is one of {@code stages}
     * @param warmUp       how long the warm-up at the operating rate lasts before the stages
     * @param inputTokens  prompt length
     * @param outputTokens answer length (ignore_eos)
     * @param seed         the load tool's seed: the same stream for every setup
     * @param probes       requests timed on each path for the added latency
     * @param placement    Patchbay's route with its placement controller on ({@code --placement on}, the servers
     *                     with {@code --allow-runtime-lora-updating}), else off
     * @param pickers      how Patchbay's picker setups run the picker behind Envoy: replicas and fallbacks
     * @param scrapeInterval how often Patchbay's routes scrape each server; null for route's default
     * @param loadTool     the load tool that sends the stream
     */
    public record Settings(
            SimFleet.Settings fleet,
            List<BenchSetup> setups,
            List<Stage> stages,
            Stage operating,
            @JsonSerialize(using = ToStringSerializer.class) Duration warmUp,
            int inputTokens,
            int outputTokens,
            long seed,
            int probes,
            boolean placement,
            BenchSetup.Pickers pickers,
            @JsonSerialize(using = ToStringSerializer.class) Duration scrapeInterval,
            LoadTool loadTool) {
        public Settings {
            if (loadTool == LoadTool.INFERENCE_PERF) {
                for (Stage stage : stages) {
                    checkInferencePerf("stage '" + stage.name() + "'", stage.arrivals(), stage.duration());
                }
                if (!warmUp.isZero()) {
                    checkInferencePerf("the warm-up", operating.arrivals(), warmUp);
                }
            }
        }

        /** At the command line rather than after the first setup's fleet has started. */
        private static void checkInferencePerf(String what, AiperfRun.Arrivals arrivals, Duration duration) {
            try {
                InferencePerfRun.checkStage(arrivals, duration);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(what + ": " + e.getMessage()
                        + " (--bursty-smoothness 0 leaves the gamma stage out; give durations in whole seconds)");
            }
        }

        /** Placement off; the picker as {@code patchbay gateway} runs it; aiperf. */
        public Settings(
                SimFleet.Settings fleet,
                List<BenchSetup> setups,
                List<Stage> stages,
                Stage operating,
                Duration warmUp,
                int inputTokens,
                int outputTokens,
                long seed,
                int probes) {
            this(
                    fleet,
                    setups,
                    stages,
                    operating,
                    warmUp,
                    inputTokens,
                    outputTokens,
                    seed,
                    probes,
                    false,
                    BenchSetup.Pickers.GATEWAY,
                    null,
                    LoadTool.AIPERF);
        }

        /** The servers as started: with the runtime adapter API when placement may use it. */
        SimFleet.Settings servers() {
            return placement ? fleet.withExtraArgs(List.of("--allow-runtime-lora-updating")) : fleet;
        }

        /** Patchbay route's flags: placement stated, whatever route's default is. */
        List<String> routeArgs() {
            List<String> args = new ArrayList<>(List.of("--placement", placement ? "on" : "off"));
            if (scrapeInterval != null) {
                args.addAll(List.of("--scrape-interval", scrapeInterval.toMillis() + "ms"));
            }
            return args;
        }
    }

    /** Everything measured, as written to {@code peers-bench.json}. */
    public record Results(
            Settings settings,
            Map<String, String> versions,
            Map<String, AddedLatency> addedLatency,
            List<StageResult> stages) {}

    private final Settings settings;
    private final Path out;
    private final Consumer<String> progress;

    public PeersBench(Settings settings, Path out, Consumer<String> progress) {
        this.settings = settings;
        this.out = out;
        this.progress = progress;
    }

    public Results run(Map<String, String> versions) throws IOException, InterruptedException {
        Path tool = FieldTools.require(settings.loadTool().program());
        Path tokenizer = SimTokenizerFiles.write(out.resolve("tokenizer"));
        List<AiperfRun.ModelShare> mix =
                AiperfRun.ModelShare.multiLoraMix(settings.fleet().adapters());
        Map<String, AddedLatency> added = new LinkedHashMap<>();
        List<StageResult> results = new ArrayList<>();
        Results sofar = new Results(settings, versions, added, results);
        int step = 0;
        int steps = settings.setups().size() * (settings.stages().size() + 2);
        long started = System.nanoTime();
        for (BenchSetup setup : settings.setups()) {
            Path dir = out.resolve(setup.id());
            try (SimFleet fleet = SimFleet.start(settings.servers(), dir.resolve("fleet"));
                    BenchSetup.Front front =
                            setup.start(fleet.servers(), dir, settings.routeArgs(), settings.pickers())) {
                progress.accept(status(++step, steps, started, setup, "added latency"));
                added.put(
                        setup.id(),
                        AddedLatency.measure(
                                URI.create(
                                        "http://" + fleet.servers().getFirst().address()),
                                front.uri(),
                                fleet.baseModel(),
                                20,
                                settings.probes()));
                write(sofar);
                Stage operating = settings.operating();
                progress.accept(status(++step, steps, started, setup, "warm-up"));
                if (!settings.warmUp().isZero()) {
                    load(tool, tokenizer, mix, front, operating.arrivals(), settings.warmUp(), dir.resolve("warm-up"));
                }
                for (Stage stage : settings.stages()) {
                    progress.accept(status(++step, steps, started, setup, stage.name()));
                    results.add(runStage(tool, tokenizer, mix, fleet.pages(), front, setup, stage, dir));
                    write(sofar);
                    progress.accept("  " + describe(results.getLast()));
                }
            }
        }
        return sofar;
    }

    private StageResult runStage(
            Path tool,
            Path tokenizer,
            List<AiperfRun.ModelShare> mix,
            ServerPages pages,
            BenchSetup.Front front,
            BenchSetup setup,
            Stage stage,
            Path dir)
            throws IOException, InterruptedException {
        ServerPages.Snapshot before = pages.read();
        OptionalLong retriesBefore = front.slotRetries();
        LoadReport report = load(
                tool,
                tokenizer,
                mix,
                front,
                stage.arrivals(),
                stage.duration(),
                dir.resolve(stage.name().replaceAll("[^a-zA-Z0-9.]+", "-")));
        ServerPages.Snapshot after = pages.read();
        OptionalLong retriesAfter = front.slotRetries();
        double loads = storageLoads(after) - storageLoads(before);
        double evictions = slotEvictions(after) - slotEvictions(before);
        double served = awaitServed(pages, before.total(SUCCESSES), report.requests() - report.errors());
        Map<String, Ttft> tiers = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> tier : tiers(mix).entrySet()) {
            tiers.put(tier.getKey(), report.ttftOf(tier.getValue()));
        }
        return new StageResult(
                setup.id(),
                stage.name(),
                stage.arrivals().rate(),
                report.sentRate(),
                report.requests(),
                report.errors(),
                served,
                report.requestThroughput(),
                report.ttft(),
                tiers,
                loads,
                evictions,
                retriesAfter.isPresent() ? retriesAfter.getAsLong() - retriesBefore.orElse(0) : null,
                report.unsent());
    }

    private static final String SUCCESSES = "vllm:request_success_total";

    private static double storageLoads(ServerPages.Snapshot pages) {
        return pages.total("vllm:lora_adapter_loads_total", "source", "disk");
    }

    private static double slotEvictions(ServerPages.Snapshot pages) {
        return pages.total("vllm:lora_adapter_evictions_total", "level", "gpu");
    }

    /**
     * The servers' count of finished requests since {@code before}, once it reaches {@code expected} or stops
     * growing: a server counts a request as its answer ends, a moment after the client has it.
     */
    private static double awaitServed(ServerPages pages, double before, int expected)
            throws IOException, InterruptedException {
        double served = pages.read().total(SUCCESSES) - before;
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (served < expected && System.nanoTime() < deadline) {
            Thread.sleep(50); // a poll bounded by the deadline
            served = pages.read().total(SUCCESSES) - before;
        }
        return served;
    }

    /** Adapters by tier: hot (the 12% ones), warm (6%), cold (2%). */
    static Map<String, List<String>> tiers(List<AiperfRun.ModelShare> mix) {
        Map<String, List<String>> tiers = new LinkedHashMap<>();
        int top = mix.stream().mapToInt(AiperfRun.ModelShare::weight).max().orElse(1);
        for (AiperfRun.ModelShare share : mix) {
            String tier = share.weight() == top ? "hot" : share.weight() * 3 >= top ? "warm" : "cold";
            tiers.computeIfAbsent(tier, t -> new ArrayList<>()).add(share.name());
        }
        return tiers;
    }

    /** One run of the settings' load tool against the front, read back. */
    private LoadReport load(
            Path tool,
            Path tokenizer,
            List<AiperfRun.ModelShare> mix,
            BenchSetup.Front front,
            AiperfRun.Arrivals arrivals,
            Duration duration,
            Path artifacts)
            throws IOException, InterruptedException {
        return switch (settings.loadTool()) {
            case AIPERF ->
                AiperfReport.read(AiperfRun.builder(tool, front.uri().toString(), artifacts)
                        .streaming(true)
                        .models(mix)
                        .tokenizer(tokenizer)
                        .inputTokens(settings.inputTokens())
                        .outputTokens(settings.outputTokens())
                        .ignoreEos(true)
                        .arrivals(arrivals)
                        .duration(duration, Duration.ofSeconds(60))
                        .seed(settings.seed())
                        .build()
                        .run());
            case INFERENCE_PERF -> {
                InferencePerfRun run = new InferencePerfRun(
                        tool,
                        front.uri().toString(),
                        settings.fleet().base(),
                        mix,
                        tokenizer,
                        settings.inputTokens(),
                        settings.outputTokens(),
                        arrivals,
                        duration,
                        settings.seed(),
                        artifacts);
                run.run();
                yield InferencePerfReport.read(run);
            }
        };
    }

    private void write(Results results) throws IOException {
        Files.createDirectories(out);
        JSON.writeValue(out.resolve("peers-bench.json").toFile(), results);
    }

    private static String status(int step, int steps, long started, BenchSetup setup, String what) {
        return String.format(
                Locale.ROOT,
                "[%d/%d, %.0f s] %s: %s",
                step,
                steps,
                (System.nanoTime() - started) / 1e9,
                setup.id(),
                what);
    }

    private static String describe(StageResult r) {
        String retries = r.slotRetries() == null ? "" : ", " + r.slotRetries() + " sent on after a slot refusal";
        String unsent = r.unsent() == null ? "" : ", " + r.unsent() + " planned by the load tool and never sent";
        return String.format(
                Locale.ROOT,
                "%s %s: %d requests (%d failed), TTFT p50 %.0f ms p99 %.0f ms, %.0f storage loads, %.0f slot evictions%s%s",
                r.setup(),
                r.stage(),
                r.requests(),
                r.errors(),
                r.ttft().p50(),
                r.ttft().p99(),
                r.storageLoads(),
                r.slotEvictions(),
                retries,
                unsent);
    }
}
