package dev.patchbay.launcher.placement;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import dev.patchbay.bench.sim.Percentiles;
import dev.patchbay.launcher.fleet.PatchbayRoute;
import dev.patchbay.launcher.fleet.ServerPages;
import dev.patchbay.launcher.fleet.SimFleet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * Each setup in turn on a fresh fleet (cold servers, a fresh router) under the same open-loop stream: a warm-up, a
 * measured window, a popularity shift that makes the coldest adapter the hottest, and a second window. Results are
 * written after every setup, so an interrupted run keeps what it measured.
 */
final class PlacementBench {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    /** How often the follow time polls /admin/placement. */
    static final Duration FOLLOW_POLL = Duration.ofMillis(250);
    /** Homes the new hottest adapter must have, all holding it, for placement to have followed. */
    static final int FOLLOW_HOMES = 2;

    /**
     * @param fleet        the servers (runtime adapter updates are added for every setup)
     * @param setups       in the order they run
     * @param rate         requests per second, Poisson
     * @param weights      popularity of a0, a1, ... before the shift; reversed after it
     * @param outputTokens tokens per answer ({@code max_tokens}, {@code ignore_eos})
     * @param warmUp       before the first window, not judged
     * @param window       each measured window
     * @param shift        from the popularity shift to the second window, not judged but for failures and the
     *                     follow time
     * @param seed         the stream's seed: the same arrivals and adapters for every setup
     */
    record Settings(
            SimFleet.Settings fleet,
            List<PlacementSetup> setups,
            double rate,
            List<Double> weights,
            int outputTokens,
            @JsonSerialize(using = ToStringSerializer.class) Duration warmUp,
            @JsonSerialize(using = ToStringSerializer.class) Duration window,
            @JsonSerialize(using = ToStringSerializer.class) Duration shift,
            long seed) {
        List<Double> shifted() {
            return weights.reversed();
        }

        /** The adapter the shift makes the hottest. */
        String newHottest() {
            List<Double> after = shifted();
            int top = 0;
            for (int i = 1; i < after.size(); i++) {
                if (after.get(i) > after.get(top)) {
                    top = i;
                }
            }
            return fleet.adapters().get(top);
        }
    }

    /** One setup's phases, its follow time (seconds; null: not placed within the limit, or placement off). */
    record SetupResult(String setup, String description, List<PhaseResult> phases, Double followSeconds) {}

    record Results(Settings settings, List<SetupResult> setups) {}

    private record Phase(String name, List<Double> weights, Duration duration) {}

    private final Settings settings;
    private final Path out;
    private final Consumer<String> progress;

    PlacementBench(Settings settings, Path out, Consumer<String> progress) {
        this.settings = settings;
        this.out = out;
        this.progress = progress;
    }

    Results run() throws IOException, InterruptedException {
        Results results = new Results(settings, new ArrayList<>());
        long started = System.nanoTime();
        int step = 0;
        int steps = settings.setups().size() * 4;
        for (PlacementSetup setup : settings.setups()) {
            Path dir = out.resolve(setup.id());
            SimFleet.Settings servers = settings.fleet().withExtraArgs(List.of("--allow-runtime-lora-updating"));
            Path profileFile = setup.writeProfileFile(dir.resolve("route"));
            try (SimFleet fleet = SimFleet.start(servers, dir.resolve("fleet"));
                    PatchbayRoute route = PatchbayRoute.start(
                            fleet.servers(),
                            setup.profile(),
                            profileFile,
                            false,
                            setup.routeArgs(),
                            dir.resolve("route"));
                    OpenLoopLoad load = new OpenLoopLoad(route.uri(), settings.outputTokens());
                    ExecutorService watcher = Executors.newVirtualThreadPerTaskExecutor()) {
                PlacementView view = new PlacementView(route.uri());
                List<Phase> phases = List.of(
                        new Phase("warm-up", settings.weights(), settings.warmUp()),
                        new Phase("window-1", settings.weights(), settings.window()),
                        new Phase("shift", settings.shifted(), settings.shift()),
                        new Phase("window-2", settings.shifted(), settings.window()));
                List<Snapshot> snapshots = new ArrayList<>();
                snapshots.add(snapshot(fleet.pages(), setup.placementOn() ? view : null));
                Future<Double> follow = null;
                for (int i = 0; i < phases.size(); i++) {
                    Phase phase = phases.get(i);
                    progress.accept(status(++step, steps, started, setup, phase));
                    if (phase.name().equals("shift") && setup.placementOn()) {
                        Duration limit = settings.shift().plus(settings.window());
                        follow = watcher.submit(
                                () -> view.follow(settings.newHottest(), FOLLOW_HOMES, FOLLOW_POLL, limit));
                    }
                    double[] weights = phase.weights().stream()
                            .mapToDouble(Double::doubleValue)
                            .toArray();
                    load.send(
                            phase.name(),
                            settings.rate(),
                            servers.adapters(),
                            weights,
                            phase.duration(),
                            settings.seed() * 31 + i);
                    snapshots.add(snapshot(fleet.pages(), setup.placementOn() ? view : null));
                }
                List<OpenLoopLoad.Outcome> outcomes = load.finish();
                Double followSeconds = follow == null ? null : follow.get();
                List<PhaseResult> phaseResults = new ArrayList<>();
                for (int i = 0; i < phases.size(); i++) {
                    phaseResults.add(
                            measure(phases.get(i), snapshots.get(i), snapshots.get(i + 1), outcomes, servers, fleet));
                }
                SetupResult result = new SetupResult(setup.id(), setup.description(), phaseResults, followSeconds);
                results.setups().add(result);
                write(results);
                phaseResults.stream().filter(PhaseResult::measured).forEach(p -> progress.accept(describe(setup, p)));
                progress.accept("  " + setup.id() + " follow time: "
                        + (followSeconds == null ? "n/a" : String.format(Locale.ROOT, "%.2f s", followSeconds)));
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IOException("the follow-time poll failed", e.getCause());
            }
        }
        return results;
    }

    /** The servers' pages and, with placement on, the router's placement view, at one moment. */
    private record Snapshot(ServerPages.Snapshot pages, JsonNode placement) {}

    private static Snapshot snapshot(ServerPages pages, PlacementView view) throws IOException, InterruptedException {
        return new Snapshot(pages.read(), view == null ? null : view.read());
    }

    private static PhaseResult measure(
            Phase phase,
            Snapshot before,
            Snapshot after,
            List<OpenLoopLoad.Outcome> outcomes,
            SimFleet.Settings servers,
            SimFleet fleet) {
        List<OpenLoopLoad.Outcome> mine =
                outcomes.stream().filter(o -> o.phase().equals(phase.name())).toList();
        double[] ttft = mine.stream()
                .filter(o -> !o.failed())
                .mapToDouble(OpenLoopLoad.Outcome::ttftMs)
                .filter(Double::isFinite)
                .sorted()
                .toArray();
        List<Double> perServer = perServer(before, after, "vllm:request_success_total");
        double most = perServer.stream().mapToDouble(Double::doubleValue).max().orElse(0);
        double fewest =
                perServer.stream().mapToDouble(Double::doubleValue).min().orElse(0);
        double hits = delta(before, after, "vllm:lora_cache_hits_total", "level", "gpu");
        double lookups = delta(before, after, "vllm:lora_cache_lookups_total", "level", "gpu");
        // Per adapter from the proxy's answer header, not the servers' per-adapter series: a server drops an
        // adapter's series when it unloads it, so their counts restart after every placement release.
        List<String> addresses = fleet.servers().stream().map(e -> e.address()).toList();
        Map<String, List<Double>> spread = new LinkedHashMap<>();
        for (String adapter : servers.adapters()) {
            Double[] counts = new Double[addresses.size()];
            Arrays.fill(counts, 0.0);
            for (OpenLoopLoad.Outcome o : mine) {
                int at = addresses.indexOf(o.server());
                if (o.adapter().equals(adapter) && at >= 0) {
                    counts[at]++;
                }
            }
            spread.put(adapter, List.of(counts));
        }
        boolean placement = after.placement() != null;
        return new PhaseResult(
                phase.name(),
                phase.weights(),
                mine.size(),
                (int) mine.stream().filter(OpenLoopLoad.Outcome::failed).count(),
                failures(mine),
                Percentiles.nearestRank(ttft, 50),
                Percentiles.nearestRank(ttft, 99),
                perServer,
                fewest == 0 ? Double.POSITIVE_INFINITY : most / fewest,
                lookups == 0 ? Double.NaN : hits / lookups,
                delta(before, after, "vllm:lora_adapter_loads_total", "source", "disk"),
                placement ? placementDelta(before, after, "loads") : null,
                placement ? placementDelta(before, after, "unloads") : null,
                placement
                        ? PlacementView.failed(after.placement(), "loads")
                                - PlacementView.failed(before.placement(), "loads")
                                + PlacementView.failed(after.placement(), "unloads")
                                - PlacementView.failed(before.placement(), "unloads")
                        : null,
                spread,
                after.placement());
    }

    private static Map<String, Integer> failures(List<OpenLoopLoad.Outcome> outcomes) {
        Map<String, Integer> why = new LinkedHashMap<>();
        outcomes.stream().filter(OpenLoopLoad.Outcome::failed).forEach(o -> why.merge(o.failure(), 1, Integer::sum));
        return why;
    }

    private static long placementDelta(Snapshot before, Snapshot after, String kind) {
        return PlacementView.started(after.placement(), kind) - PlacementView.started(before.placement(), kind);
    }

    private static double delta(Snapshot before, Snapshot after, String sample, String label, String value) {
        return after.pages().total(sample, label, value) - before.pages().total(sample, label, value);
    }

    /** Per server, in fleet order, the growth of {@code sample}. */
    private static List<Double> perServer(Snapshot before, Snapshot after, String sample) {
        List<Double> then = before.pages().perServer(sample);
        List<Double> now = after.pages().perServer(sample);
        List<Double> counts = new ArrayList<>(now.size());
        for (int i = 0; i < now.size(); i++) {
            counts.add(now.get(i) - then.get(i));
        }
        return counts;
    }

    private void write(Results results) throws IOException {
        Files.createDirectories(out);
        JSON.writeValue(out.resolve("placement-bench.json").toFile(), results);
    }

    private static String status(int step, int steps, long started, PlacementSetup setup, Phase phase) {
        return String.format(
                Locale.ROOT,
                "[%d/%d, %.0f s] %s: %s (%d s, weights %s)",
                step,
                steps,
                (System.nanoTime() - started) / 1e9,
                setup.id(),
                phase.name(),
                phase.duration().toSeconds(),
                Arrays.toString(phase.weights().stream()
                        .mapToDouble(Double::doubleValue)
                        .toArray()));
    }

    private static String describe(PlacementSetup setup, PhaseResult p) {
        return String.format(
                Locale.ROOT,
                "  %s %s: %d requests (%d failed), per server %s (%.2fx), slot hits %.3f, TTFT p50 %.0f ms p99 %.0f"
                        + " ms, %.0f storage loads, placement loads %s",
                setup.id(),
                p.phase(),
                p.sent(),
                p.failed(),
                p.requestsPerServer(),
                p.busiestToLeast(),
                p.slotHitRate(),
                p.ttftP50(),
                p.ttftP99(),
                p.storageLoads(),
                p.placementLoads() == null ? "n/a" : p.placementLoads());
    }
}
