package dev.patchbay.launcher.placement;

import dev.patchbay.launcher.fleet.SimFleet;
import dev.patchbay.router.DurationOption;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code patchbay bench-placement}: the router's placement controller on real server processes. */
@Command(
        name = "bench-placement",
        mixinStandardHelpOptions = true,
        description = "Run patchbay route with placement off, on, and on with the placement-scorer in front of a "
                + "fresh fleet of patchbay serve processes each, under the same open-loop stream of adapters of "
                + "unequal popularity that reverses mid-run, and report how evenly the servers are loaded, the slot "
                + "hit rate, TTFT, failures, loads and how fast placement follows the shift.")
public final class PlacementBenchCommand implements Callable<Integer> {
    @Option(names = "--servers", defaultValue = "3", description = "Model servers (default ${DEFAULT-VALUE}).")
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
            defaultValue = "4",
            description = "Requests in a batch per server (default ${DEFAULT-VALUE}: small enough that the hottest "
                    + "adapter's traffic does not fit on one server).")
    int maxNumSeqs;

    @Option(
            names = "--sim-latency-ms",
            defaultValue = "10,0.02,0.5,0.5,150,10",
            description = "The simulated model's latencies, as serve's flag (default ${DEFAULT-VALUE}).")
    String simLatencyMs;

    @Option(
            names = "--rate",
            defaultValue = "40",
            description = "Requests per second, Poisson (default ${DEFAULT-VALUE}).")
    double rate;

    @Option(
            names = "--weights",
            split = ",",
            defaultValue = "16,8,4,2,1,1",
            description = "Popularity of adapters a0, a1, ...; one adapter per weight; reversed at the shift "
                    + "(default ${DEFAULT-VALUE}).")
    List<Double> weights;

    @Option(
            names = "--output-tokens",
            defaultValue = "16",
            description = "Tokens per answer, ignore_eos (default ${DEFAULT-VALUE}).")
    int outputTokens;

    @Option(
            names = "--warm-up",
            defaultValue = "30s",
            converter = DurationOption.class,
            description = "Before the first window, not judged (default ${DEFAULT-VALUE}).")
    Duration warmUp;

    @Option(
            names = "--window",
            defaultValue = "60s",
            converter = DurationOption.class,
            description = "Each of the two measured windows (default ${DEFAULT-VALUE}).")
    Duration window;

    @Option(
            names = "--shift",
            defaultValue = "30s",
            converter = DurationOption.class,
            description = "From the popularity shift to the second window (default ${DEFAULT-VALUE}).")
    Duration shift;

    @Option(
            names = "--setups",
            split = ",",
            description = "Setups to run, in order (default: all): placement-off, placement-on, placement-scorer.")
    List<String> setups;

    @Option(names = "--seed", defaultValue = "7", description = "The stream's seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(
            names = "--out",
            defaultValue = "placement-bench",
            description = "Output directory (default ${DEFAULT-VALUE}).")
    Path out;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PlacementBench.Settings settings = settings();
        System.err.println("placement benchmark: " + settings.setups().size() + " setups on " + servers + " servers at "
                + rate + " req/s, weights " + weights);
        PlacementBench.Results results = new PlacementBench(settings, out, System.err::println).run();
        String markdown = PlacementReport.markdown(results, commandLine());
        Files.writeString(out.resolve("placement-bench.md"), markdown, StandardCharsets.UTF_8);
        PlacementReport.chart(results, out);
        System.out.print(markdown);
        System.err.println(
                "wrote " + out.resolve("placement-bench.md") + ", placement-bench.json and" + " placement-bench.png");
        return 0;
    }

    PlacementBench.Settings settings() {
        require(servers >= 2, "--servers must be at least 2 (balance needs a second server), got " + servers);
        require(maxLoras >= 1, "--max-loras must be at least 1, got " + maxLoras);
        require(rate > 0, "--rate must be above 0, got " + rate);
        require(weights.size() >= 2, "--weights needs at least two adapters, got " + weights);
        require(weights.stream().allMatch(w -> w > 0), "--weights must all be above 0, got " + weights);
        require(outputTokens >= 1, "--output-tokens must be at least 1, got " + outputTokens);
        for (var d : List.of(warmUp, window, shift)) {
            require(!d.isNegative(), "durations must not be negative, got " + d);
        }
        require(!window.isZero(), "--window must be above 0");
        List<String> adapters = new ArrayList<>();
        for (int i = 0; i < weights.size(); i++) {
            adapters.add("a" + i);
        }
        List<PlacementSetup> chosen;
        try {
            chosen = setups == null
                    ? Arrays.asList(PlacementSetup.values())
                    : setups.stream().map(PlacementSetup::byId).toList();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--setups: " + e.getMessage());
        }
        SimFleet.Settings fleet = new SimFleet.Settings(
                servers, "bench", adapters, maxLoras, maxCpuLoras, maxNumSeqs, simLatencyMs, "384m");
        return new PlacementBench.Settings(
                fleet, chosen, rate, List.copyOf(weights), outputTokens, warmUp, window, shift, seed);
    }

    private void require(boolean ok, String message) {
        if (!ok) {
            throw new CommandLine.ParameterException(spec.commandLine(), message);
        }
    }

    private String commandLine() {
        return "patchbay bench-placement --servers " + servers + " --max-loras " + maxLoras + " --max-cpu-loras "
                + maxCpuLoras + " --max-num-seqs " + maxNumSeqs + " --sim-latency-ms " + simLatencyMs + " --rate "
                + rate + " --weights "
                + String.join(",", weights.stream().map(String::valueOf).toList())
                + " --output-tokens " + outputTokens + " --warm-up " + warmUp.toSeconds() + "s --window "
                + window.toSeconds() + "s --shift " + shift.toSeconds() + "s --seed " + seed
                + (setups == null ? "" : " --setups " + String.join(",", setups));
    }
}
