package dev.patchbay.launcher.placement;

import dev.patchbay.bench.sim.Charts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/** The placement benchmark's results for people: targets judged per setup, every figure per phase, and a chart. */
final class PlacementReport {
    /** The busiest server may finish at most this many times the least busy one's requests in a window. */
    static final double BALANCE_TARGET = 1.25;
    /** Scheduled requests that find their adapter in a slot, at least, in a window. */
    static final double HIT_TARGET = 0.9;

    private PlacementReport() {}

    /** A target, whether it was met (null: it does not apply, as following a shift without placement). */
    record Verdict(String target, Boolean met, String figures) {}

    static List<Verdict> judge(PlacementBench.Settings settings, PlacementBench.SetupResult setup) {
        List<PhaseResult> windows =
                setup.phases().stream().filter(PhaseResult::measured).toList();
        StringBuilder ratios = new StringBuilder(), hits = new StringBuilder();
        boolean balanced = true, hitting = true;
        for (PhaseResult w : windows) {
            ratios.append(String.format(Locale.ROOT, "%s %.2fx; ", w.phase(), w.busiestToLeast()));
            hits.append(String.format(Locale.ROOT, "%s %.3f; ", w.phase(), w.slotHitRate()));
            balanced &= w.busiestToLeast() <= BALANCE_TARGET;
            hitting &= w.slotHitRate() >= HIT_TARGET;
        }
        int failed = setup.phases().stream().mapToInt(PhaseResult::failed).sum();
        int sent = setup.phases().stream().mapToInt(PhaseResult::sent).sum();
        List<Verdict> verdicts = new ArrayList<>();
        verdicts.add(new Verdict(
                String.format(
                        Locale.ROOT, "busiest server at most %.2fx the least busy one's requests", BALANCE_TARGET),
                balanced,
                ratios.toString()));
        verdicts.add(new Verdict(
                String.format(Locale.ROOT, "slot hit rate at least %.2f", HIT_TARGET), hitting, hits.toString()));
        long shiftSeconds = settings.shift().toSeconds();
        Double follow = setup.followSeconds();
        boolean placementOn = setup.phases().getLast().placementAtEnd() != null;
        verdicts.add(new Verdict(
                "after the shift, " + settings.newHottest() + " placed on " + PlacementBench.FOLLOW_HOMES
                        + "+ homes that all hold it within the shift phase (" + shiftSeconds + " s)",
                placementOn ? (Boolean) (follow != null && follow <= shiftSeconds) : null,
                !placementOn
                        ? "placement off"
                        : follow == null
                                ? "not placed within "
                                        + (shiftSeconds + settings.window().toSeconds()) + " s"
                                : String.format(Locale.ROOT, "%.2f s", follow)));
        verdicts.add(new Verdict("no request fails", failed == 0, failed + " of " + sent + " failed"));
        return verdicts;
    }

    static String markdown(PlacementBench.Results results, String command) {
        PlacementBench.Settings s = results.settings();
        StringBuilder md = new StringBuilder();
        md.append("Command: `").append(command).append("`\n\n");
        md.append(String.format(
                Locale.ROOT,
                "Fleet: %d `patchbay serve` processes (simulated model, `--sim-latency-ms %s`, max_loras %d,"
                        + " max_cpu_loras %d, max_num_seqs %d, `--allow-runtime-lora-updating`), adapters %s."
                        + " Load: open-loop Poisson at %.1f req/s, `max_tokens` %d with `ignore_eos`, streamed, seed"
                        + " %d; weights %s, reversed at the shift. Phases: warm-up %d s, window-1 %d s, shift %d s,"
                        + " window-2 %d s.\n",
                s.fleet().servers(),
                s.fleet().simLatencyMs(),
                s.fleet().maxLoras(),
                s.fleet().maxCpuLoras(),
                s.fleet().maxNumSeqs(),
                String.join(", ", s.fleet().adapters()),
                s.rate(),
                s.outputTokens(),
                s.seed(),
                s.weights(),
                s.warmUp().toSeconds(),
                s.window().toSeconds(),
                s.shift().toSeconds(),
                s.window().toSeconds()));
        for (PlacementBench.SetupResult setup : results.setups()) {
            md.append("\n### ")
                    .append(setup.setup())
                    .append(": ")
                    .append(setup.description())
                    .append("\n\n");
            md.append("| target | met | figures |\n|---|---|---|\n");
            for (Verdict v : judge(s, setup)) {
                md.append("| ")
                        .append(v.target())
                        .append(" | ")
                        .append(v.met() == null ? "n/a" : v.met() ? "met" : "**not met**")
                        .append(" | ")
                        .append(v.figures())
                        .append(" |\n");
            }
            md.append("\n| figure |");
            setup.phases().forEach(p -> md.append(' ').append(p.phase()).append(" |"));
            md.append("\n|---|");
            setup.phases().forEach(p -> md.append("---:|"));
            md.append('\n');
            row(md, setup, "requests sent", p -> Integer.toString(p.sent()));
            row(md, setup, "failed", p -> p.failed() + (p.failures().isEmpty() ? "" : " " + p.failures()));
            row(md, setup, "requests per server", p -> join(p.requestsPerServer()));
            row(md, setup, "busiest / least busy", p -> String.format(Locale.ROOT, "%.2f", p.busiestToLeast()));
            row(md, setup, "slot hit rate", p -> String.format(Locale.ROOT, "%.3f", p.slotHitRate()));
            row(md, setup, "TTFT p50 (ms)", p -> String.format(Locale.ROOT, "%.0f", p.ttftP50()));
            row(md, setup, "TTFT p99 (ms)", p -> String.format(Locale.ROOT, "%.0f", p.ttftP99()));
            row(md, setup, "storage loads", p -> String.format(Locale.ROOT, "%.0f", p.storageLoads()));
            row(
                    md,
                    setup,
                    "placement loads / unloads (failed)",
                    p -> p.placementLoads() == null
                            ? "n/a"
                            : p.placementLoads() + " / " + p.placementUnloads() + " (" + p.placementFailed() + ")");
            for (String adapter : s.fleet().adapters()) {
                row(
                        md,
                        setup,
                        adapter + " per server",
                        p -> join(p.adapterSpread().get(adapter)));
            }
        }
        return md.toString();
    }

    private static void row(
            StringBuilder md, PlacementBench.SetupResult setup, String name, Function<PhaseResult, String> value) {
        md.append("| ").append(name).append(" |");
        setup.phases().forEach(p -> md.append(' ').append(value.apply(p)).append(" |"));
        md.append('\n');
    }

    private static String join(List<Double> counts) {
        return String.join(
                " / ",
                counts.stream().map(c -> String.format(Locale.ROOT, "%.0f", c)).toList());
    }

    /** Requests each server finished, one line per setup and measured window, against the server's number. */
    static void chart(PlacementBench.Results results, Path dir) throws IOException {
        Files.createDirectories(dir);
        Map<String, double[][]> lines = new LinkedHashMap<>();
        for (PlacementBench.SetupResult setup : results.setups()) {
            for (PhaseResult p : setup.phases()) {
                if (!p.measured()) {
                    continue;
                }
                double[] x = new double[p.requestsPerServer().size()];
                for (int i = 0; i < x.length; i++) {
                    x[i] = i;
                }
                double[] y = p.requestsPerServer().stream()
                        .mapToDouble(Double::doubleValue)
                        .toArray();
                lines.put(setup.setup() + " " + p.phase(), new double[][] {x, y});
            }
        }
        Charts.lines(
                dir.resolve("placement-bench.png"),
                "Requests finished per server, by setup and window",
                "server",
                "requests finished",
                lines);
    }
}
