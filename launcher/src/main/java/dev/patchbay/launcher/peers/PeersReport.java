package dev.patchbay.launcher.peers;

import dev.patchbay.bench.sim.Charts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The peers benchmark's results for people: tables per stage, the added latency of each path, the targets judged,
 * and charts of TTFT p99 and storage loads by stage.
 */
public final class PeersReport {
    private PeersReport() {}

    /** A target and whether it was met, with the figures that decide it. */
    public record Verdict(String target, boolean met, String why) {}

    public static List<Verdict> judge(PeersBench.Results results) {
        List<Verdict> verdicts = new ArrayList<>();
        List<StageResult> rows = results.stages();
        String operating = results.settings().operating().name();
        List<String> stages = stageNames(results);
        List<String> realLoraPeers = List.of(BenchSetup.LLMD_LORA.id(), BenchSetup.LLMD_GIE_LORA.id());
        StringBuilder ratios = new StringBuilder();
        boolean twiceAtOperating = false, neverWorse = true, fewerLoads = true;
        boolean measured = false, measuredAtOperating = false;
        StringBuilder loads = new StringBuilder();
        for (String stage : stages) {
            Optional<StageResult> ours = find(rows, BenchSetup.PATCHBAY_PICKER.id(), stage);
            Optional<StageResult> best = rows.stream()
                    .filter(r -> r.stage().equals(stage) && realLoraPeers.contains(r.setup()))
                    .min((a, b) -> Double.compare(a.ttft().p99(), b.ttft().p99()));
            if (ours.isEmpty() || best.isEmpty()) {
                continue;
            }
            measured = true;
            double ratio = ours.get().ttft().p99() / best.get().ttft().p99();
            ratios.append(String.format(
                    Locale.ROOT, "%s %.2fx (%s); ", stage, ratio, best.get().setup()));
            if (stage.equals(operating)) {
                measuredAtOperating = true;
                twiceAtOperating = ratio <= 0.5;
            }
            neverWorse &= ratio <= 1.1;
            StageResult bestLoads = rows.stream()
                    .filter(r -> r.stage().equals(stage)
                            && r.setup().equals(best.get().setup()))
                    .findFirst()
                    .orElseThrow();
            fewerLoads &= ours.get().storageLoads() < bestLoads.storageLoads();
            loads.append(String.format(
                    Locale.ROOT, "%s %.0f vs %.0f; ", stage, ours.get().storageLoads(), bestLoads.storageLoads()));
        }
        if (measuredAtOperating) {
            verdicts.add(new Verdict(
                    "Patchbay's picker at least 2x lower TTFT p99 than the best real LoRA-aware peer at the operating"
                            + " stage (" + operating + ")",
                    twiceAtOperating,
                    ratios.toString()));
        }
        if (measured) {
            verdicts.add(new Verdict("never worse than 1.1x that peer at any stage", neverWorse, ratios.toString()));
            verdicts.add(
                    new Verdict("fewer storage loads than that peer at every stage", fewerLoads, loads.toString()));
        }
        AddedLatency proxy = results.addedLatency().get(BenchSetup.PATCHBAY_PROXY.id());
        AddedLatency envoyPicker = results.addedLatency().get(BenchSetup.PATCHBAY_PICKER.id());
        if (proxy != null && envoyPicker != null) {
            boolean met = proxy.addedP50() <= envoyPicker.addedP50() && proxy.addedP99() <= envoyPicker.addedP99();
            verdicts.add(new Verdict(
                    "Patchbay's reverse proxy adds no more latency (p50 and p99) than Envoy with an ext_proc picker",
                    met,
                    String.format(
                            Locale.ROOT,
                            "proxy +%.2f / +%.2f ms, Envoy + picker +%.2f / +%.2f ms",
                            proxy.addedP50() * 1000,
                            proxy.addedP99() * 1000,
                            envoyPicker.addedP50() * 1000,
                            envoyPicker.addedP99() * 1000)));
        }
        return verdicts;
    }

    public static String markdown(PeersBench.Results results, String command) {
        StringBuilder md = new StringBuilder();
        md.append("Command: `").append(command).append("`\n\nVersions: ");
        results.versions().forEach((k, v) -> md.append(k).append(' ').append(v).append("; "));
        md.append("\n\n### Targets\n\n| target | met | figures |\n|---|---|---|\n");
        for (Verdict v : judge(results)) {
            md.append("| ")
                    .append(v.target())
                    .append(" | ")
                    .append(v.met() ? "met" : "**not met**")
                    .append(" | ")
                    .append(v.why())
                    .append(" |\n");
        }
        md.append("\n### Added latency (idle fleet, one streamed request at a time)\n\n");
        md.append(
                "| setup | direct p50 (ms) | through p50 (ms) | added p50 (ms) | added p99 (ms) |\n|---|---:|---:|---:|---:|\n");
        results.addedLatency()
                .forEach((setup, a) -> md.append(String.format(
                        Locale.ROOT,
                        "| %s | %.2f | %.2f | %+.2f | %+.2f |\n",
                        setup,
                        a.directP50() * 1000,
                        a.frontP50() * 1000,
                        a.addedP50() * 1000,
                        a.addedP99() * 1000)));
        boolean unsentCounted = results.stages().stream().anyMatch(r -> r.unsent() != null);
        for (String stage : stageNames(results)) {
            md.append("\n### ").append(stage).append("\n\n");
            md.append(
                    "| setup | sent (req/s) | done (req/s) | errors | TTFT p50 (ms) | TTFT p99 (ms) | hot p99 | warm p99 "
                            + "| cold p99 | storage loads | slot evictions | slot retries |"
                            + (unsentCounted ? " never sent |" : "")
                            + "\n");
            md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + (unsentCounted ? "---:|" : "")
                    + "\n");
            for (StageResult r : results.stages()) {
                if (!r.stage().equals(stage)) {
                    continue;
                }
                md.append(String.format(
                        Locale.ROOT,
                        "| %s | %.1f | %.1f | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %s |%s\n",
                        r.setup(),
                        r.sentRate(),
                        r.throughput(),
                        r.errors(),
                        r.ttft().p50(),
                        r.ttft().p99(),
                        tier(r, "hot"),
                        tier(r, "warm"),
                        tier(r, "cold"),
                        r.storageLoads(),
                        r.slotEvictions(),
                        r.slotRetries() == null ? "-" : r.slotRetries().toString(),
                        unsentCounted
                                ? " " + (r.unsent() == null ? "-" : r.unsent().toString()) + " |"
                                : ""));
            }
        }
        return md.toString();
    }

    /** TTFT p99 and storage loads against the stage's rate, one line per setup (Poisson stages). */
    public static void charts(PeersBench.Results results, Path dir) throws IOException {
        Files.createDirectories(dir);
        Map<String, double[][]> ttft = new LinkedHashMap<>();
        Map<String, double[][]> loads = new LinkedHashMap<>();
        for (BenchSetup setup : results.settings().setups()) {
            List<StageResult> poisson = results.stages().stream()
                    .filter(r -> r.setup().equals(setup.id()) && r.stage().startsWith("poisson"))
                    .toList();
            if (poisson.isEmpty()) {
                continue;
            }
            double[] x = poisson.stream().mapToDouble(StageResult::rate).toArray();
            ttft.put(setup.id(), new double[][] {
                x, poisson.stream().mapToDouble(r -> r.ttft().p99() / 1000).toArray()
            });
            loads.put(setup.id(), new double[][] {
                x, poisson.stream().mapToDouble(StageResult::storageLoads).toArray()
            });
        }
        Charts.lines(
                dir.resolve("peers-bench-ttft-p99.png"),
                "TTFT p99 by setup (Poisson stages)",
                "request rate (req/s)",
                "TTFT p99 (s)",
                ttft);
        Charts.lines(
                dir.resolve("peers-bench-loads.png"),
                "Adapter loads from storage by setup (Poisson stages)",
                "request rate (req/s)",
                "loads from storage",
                loads);
    }

    private static double tier(StageResult r, String tier) {
        var t = r.ttftByTier().get(tier);
        return t == null ? Double.NaN : t.p99();
    }

    private static Optional<StageResult> find(List<StageResult> rows, String setup, String stage) {
        return rows.stream()
                .filter(r -> r.setup().equals(setup) && r.stage().equals(stage))
                .findFirst();
    }

    private static List<String> stageNames(PeersBench.Results results) {
        return results.settings().stages().stream().map(PeersBench.Stage::name).toList();
    }
}
