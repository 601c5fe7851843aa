package dev.patchbay.bench.sim;

import dev.patchbay.router.pick.profile.ProfileFile;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Every policy at every rate on one workload. Each rate's request stream is drawn once and replayed for
 * every policy. A policy whose TTFT p99 went over {@code stopAboveSeconds} is saturated and skips the
 * higher rates (it would only take longer to simulate a longer queue). {@code routers} independent routers front the
 * fleet.
 */
public record Sweep(
        SimSettings settings,
        List<String> policies,
        List<Double> rates,
        Arrivals arrivals,
        Trace.Lengths lengths,
        ProfileFile profileFile,
        double stopAboveSeconds,
        long seed,
        FleetSimulator.ScrapePath scrapePath,
        int routers) {

    public List<RunResult> run(PrintStream progress) {
        List<RunResult> results = new ArrayList<>();
        Set<String> saturated = new HashSet<>();
        Workload w = settings.workload();
        try (FleetSimulator sim = new FleetSimulator(settings, scrapePath, profileFile, routers)) {
            for (double rate : rates) {
                Trace trace = Trace.generate(
                        w, rate, settings.durationNanos(), arrivals, lengths, settings.maxModelLen(), seed);
                for (String policy : policies) {
                    if (saturated.contains(policy)) continue;
                    String label = String.format(
                            Locale.ROOT,
                            "%s %s @ %s req/s (%d requests)",
                            w.name(),
                            policy,
                            Report.number(rate),
                            trace.size());
                    progress.print(label + ":");
                    progress.flush();
                    RunResult r = sim.run(policy, trace, rate, seed, f -> {
                        progress.printf(Locale.ROOT, " %.0f%%", 100 * f);
                        progress.flush();
                    });
                    progress.printf(
                            Locale.ROOT,
                            "  done in %.1f s: TTFT p99 %s s, %d loads from storage%n",
                            r.wallSeconds(),
                            Report.seconds(r.ttftP99()),
                            r.loadsFromStorage());
                    results.add(r);
                    if (r.ttftP99() > stopAboveSeconds) saturated.add(policy);
                }
            }
        }
        return results;
    }
}
