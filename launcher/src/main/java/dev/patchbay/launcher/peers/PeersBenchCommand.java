package dev.patchbay.launcher.peers;

import dev.patchbay.engine.PatchbayVersion;
import dev.patchbay.launcher.field.FieldTools;
import dev.patchbay.launcher.fleet.SimFleet;
import dev.patchbay.launcher.gateway.EnvoyConfig;
import dev.patchbay.launcher.gateway.EnvoyProcess;
import dev.patchbay.launcher.gateway.GatewayCommand;
import dev.patchbay.launcher.load.AiperfRun;
import dev.patchbay.launcher.load.LoadTool;
import dev.patchbay.router.DurationOption;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code patchbay bench-peers}: Patchbay against the field's routers on the same servers, under aiperf or
 * inference-perf.
 */
@Command(
        name = "bench-peers",
        mixinStandardHelpOptions = true,
        description = "Send the same request stream (aiperf's or inference-perf's) through Patchbay's picker and"
                + " proxy, llm-d's picker, vllm-router and Envoy alone, each in front of a fresh fleet of patchbay"
                + " serve processes, and report TTFT, throughput, errors, storage loads and the added latency of each"
                + " path.")
public final class PeersBenchCommand implements Callable<Integer> {
    @Option(names = "--servers", defaultValue = "4", description = "Model servers (default ${DEFAULT-VALUE}).")
    int servers;

    @Option(
            names = "--max-loras",
            defaultValue = "2",
            description = "Batch slots per server (default ${DEFAULT-VALUE}).")
    int maxLoras;

    @Option(
            names = "--max-cpu-loras",
            defaultValue = "4",
            description = "Adapters in host memory per server (default ${DEFAULT-VALUE}).")
    int maxCpuLoras;

    @Option(
            names = "--max-num-seqs",
            defaultValue = "16",
            description = "Requests in a batch per server (default ${DEFAULT-VALUE}).")
    int maxNumSeqs;

    @Option(
            names = "--sim-latency-ms",
            defaultValue = "10,0.02,0.5,0.5,150,10",
            description = "The simulated model's latencies, as serve's flag (default ${DEFAULT-VALUE}).")
    String simLatencyMs;

    @Option(
            names = "--operating-rate",
            defaultValue = "30",
            description = "The fleet's operating rate, req/s (default ${DEFAULT-VALUE}).")
    double operatingRate;

    @Option(
            names = "--factors",
            split = ",",
            defaultValue = "0.5,0.75,1.0,1.25",
            description = "Poisson stages at these multiples of the operating rate (default ${DEFAULT-VALUE}).")
    List<Double> factors;

    @Option(
            names = "--bursty-smoothness",
            defaultValue = "0.25",
            description = "A gamma stage at the operating rate with this smoothness (below 1 is bursty; 0: none; "
                    + "default ${DEFAULT-VALUE}, coefficient of variation 2).")
    double burstySmoothness;

    @Option(
            names = "--stage-duration",
            defaultValue = "60s",
            converter = DurationOption.class,
            description = "Each stage (default ${DEFAULT-VALUE}).")
    Duration stageDuration;

    @Option(
            names = "--warm-up",
            defaultValue = "20s",
            converter = DurationOption.class,
            description = "Warm-up per setup (default ${DEFAULT-VALUE}).")
    Duration warmUp;

    @Option(
            names = "--setups",
            split = ",",
            description = "Setups to run, in order (default: all): patchbay-picker, gie-lora-picker, patchbay-proxy,"
                    + " llm-d-lora, llm-d-gie-lora, llm-d-default, vllm-router-rr, vllm-router-cache-aware, envoy-rr.")
    List<String> setups;

    @Option(names = "--input-tokens", defaultValue = "64", description = "Prompt tokens (default ${DEFAULT-VALUE}).")
    int inputTokens;

    @Option(names = "--output-tokens", defaultValue = "32", description = "Output tokens (default ${DEFAULT-VALUE}).")
    int outputTokens;

    @Option(
            names = "--seed",
            defaultValue = "7",
            description = "The load tool's seed (default ${DEFAULT-VALUE}; inference-perf's arrival times take none).")
    long seed;

    @Option(
            names = "--load-tool",
            defaultValue = "aiperf",
            paramLabel = "aiperf|inference-perf",
            description = "The load tool that sends the stream (default ${DEFAULT-VALUE}); inference-perf, the Gateway"
                    + " API Inference Extension's, has Poisson arrivals only: give it --bursty-smoothness 0.")
    String loadTool;

    @Option(
            names = "--probes",
            defaultValue = "200",
            description = "Requests timed on each path for the added latency (default ${DEFAULT-VALUE}).")
    int probes;

    @Option(
            names = "--placement",
            defaultValue = "off",
            paramLabel = "on|off",
            description = "Patchbay's route setups with the placement controller on or off (default ${DEFAULT-VALUE});"
                    + " on also starts the servers with --allow-runtime-lora-updating.")
    String placement;

    @Option(
            names = "--pickers",
            defaultValue = "1",
            description = "Patchbay's pickers behind the one Envoy, which spreads requests over them round robin, as a "
                    + "Kubernetes Service over the picker's replicas (default ${DEFAULT-VALUE}).")
    int pickers;

    @Option(
            names = "--ext-proc-fallbacks",
            paramLabel = "N",
            description = "Endpoints each of Patchbay's pickers names after its first choice (route "
                    + "--ext-proc-fallbacks; default: as patchbay gateway, " + GatewayCommand.DEFAULT_FALLBACKS + ").")
    int fallbacks = GatewayCommand.DEFAULT_FALLBACKS;

    @Option(
            names = "--scrape-interval",
            paramLabel = "DURATION",
            converter = DurationOption.class,
            description = "How often Patchbay's routes scrape each server (route --scrape-interval; default: route's).")
    Duration scrapeInterval;

    @Option(names = "--out", defaultValue = "peers-bench", description = "Output directory (default ${DEFAULT-VALUE}).")
    Path out;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (!placement.equals("on") && !placement.equals("off")) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--placement must be on or off, got '" + placement + "'");
        }
        PeersBench.Settings settings;
        try {
            EnvoyConfig.checkFallbacks(fallbacks);
            settings = settings(); // checks --pickers, --load-tool and its stages
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        Map<String, String> versions = versions(settings.loadTool());
        System.err.println("peers benchmark: " + settings.setups().size() + " setups x "
                + settings.stages().size() + " stages of " + stageDuration.toSeconds() + " s, " + servers
                + " servers; versions "
                + versions);
        PeersBench.Results results = new PeersBench(settings, out, System.err::println).run(versions);
        String markdown = PeersReport.markdown(results, commandLine());
        Files.writeString(out.resolve("peers-bench.md"), markdown, StandardCharsets.UTF_8);
        PeersReport.charts(results, out);
        System.out.print(markdown);
        System.err.println("wrote " + out.resolve("peers-bench.md") + ", peers-bench.json and two charts");
        return 0;
    }

    PeersBench.Settings settings() {
        List<String> adapters = new ArrayList<>();
        for (String tier : List.of("hot", "warm", "cold")) {
            for (int i = 1; i <= 5; i++) {
                adapters.add(tier + "-" + i);
            }
        }
        SimFleet.Settings fleet = new SimFleet.Settings(
                servers, "bench", adapters, maxLoras, maxCpuLoras, maxNumSeqs, simLatencyMs, "384m");
        Duration stage = stageDuration;
        List<PeersBench.Stage> stages = new ArrayList<>();
        for (double factor : factors) {
            stages.add(poissonStage(factor, stage));
        }
        if (burstySmoothness > 0) {
            stages.add(new PeersBench.Stage(
                    String.format(Locale.ROOT, "gamma(%.2f) x1.00", burstySmoothness),
                    AiperfRun.Arrivals.gamma(operatingRate, burstySmoothness),
                    stage));
        }
        List<BenchSetup> chosen = setups == null
                ? Arrays.asList(BenchSetup.values())
                : setups.stream().map(BenchSetup::byId).toList();
        return new PeersBench.Settings(
                fleet,
                chosen,
                stages,
                // Warm-up runs at the operating rate even when --factors leaves its stage out.
                poissonStage(1.0, stage),
                warmUp,
                inputTokens,
                outputTokens,
                seed,
                probes,
                "on".equals(placement),
                new BenchSetup.Pickers(pickers, fallbacks),
                scrapeInterval,
                LoadTool.byProgram(loadTool));
    }

    private PeersBench.Stage poissonStage(double factor, Duration duration) {
        return new PeersBench.Stage(
                String.format(Locale.ROOT, "poisson x%.2f", factor),
                AiperfRun.Arrivals.poisson(operatingRate * factor),
                duration);
    }

    private static Map<String, String> versions(LoadTool tool) throws IOException, InterruptedException {
        Map<String, String> versions = new LinkedHashMap<>();
        versions.put("patchbay", PatchbayVersion.VERSION);
        versions.put("envoy", EnvoyProcess.versionNumber(FieldTools.require("envoy")));
        Optional<Path> epp = FieldTools.find("llm-d-epp");
        epp.ifPresent(p -> versions.put("llm-d-epp", fileName(p)));
        versions.put("vllm-router", "0.1.17");
        versions.put(tool.program(), tool.version());
        return versions;
    }

    private static String fileName(Path p) {
        try {
            return p.toRealPath().getFileName().toString();
        } catch (IOException e) {
            return p.toString();
        }
    }

    String commandLine() {
        return "patchbay bench-peers --servers " + servers + " --operating-rate " + operatingRate + " --factors "
                + factors.stream().map(String::valueOf).collect(Collectors.joining(",")) + " --bursty-smoothness "
                + burstySmoothness + " --stage-duration " + stageDuration.toSeconds() + "s"
                + (setups == null ? "" : " --setups " + String.join(",", setups)) + " --placement " + placement
                + " --pickers " + pickers + " --ext-proc-fallbacks " + fallbacks
                + (scrapeInterval == null ? "" : " --scrape-interval " + scrapeInterval.toMillis() + "ms")
                + (LoadTool.byProgram(loadTool) == LoadTool.AIPERF ? "" : " --load-tool " + loadTool);
    }
}
