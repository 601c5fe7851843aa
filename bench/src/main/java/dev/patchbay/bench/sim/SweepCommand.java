package dev.patchbay.bench.sim;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.patchbay.router.DurationOption;
import dev.patchbay.router.pick.Profiles;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code patchbay sweep}: the router's acceptance sweep ({@link AcceptanceSweep}) in one command. Prints progress on
 * stderr and the judged table and the worst point on stdout; writes every run and point as JSON and one PNG chart per
 * workload and arrival process. Exits 0 whether or not the targets are met: it measures, it does not gate.
 */
@Command(
        name = "sweep",
        mixinStandardHelpOptions = true,
        description =
                "Sweep gie-multilora and zipf-1000 over load factors, arrival processes and seeds; judge patchbay "
                        + "against its LoRA-aware peers and round-robin.")
public final class SweepCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--seeds", defaultValue = "5", description = "seeds per point (1..N)")
    int seeds;

    @Option(
            names = "--factors",
            split = ",",
            defaultValue = "0.6,0.8,1.0,1.1,1.2,1.3",
            description = "multiples of each workload's operating rate (gie-multilora 140 req/s, zipf-1000 30 req/s)")
    List<Double> factors;

    @Option(
            names = "--arrivals",
            split = ",",
            defaultValue = "1,2,4",
            description = "arrival coefficients of variation: 1 is Poisson, more is Gamma (bursty)")
    List<Double> cvs;

    @Option(
            names = "--workloads",
            split = ",",
            defaultValue = "gie-multilora,zipf",
            description = "gie-multilora and/or zipf (1000 adapters)")
    List<String> workloads;

    @Option(
            names = "--policies",
            split = ",",
            defaultValue = "round-robin,gie-lora,llmd-load-state,dynamo-hrw,dynamo-mcf,patchbay,pooled-ideal",
            description = "must include patchbay, gie-lora, llmd-load-state and round-robin; pooled-ideal is the fleet "
                    + "pooled into one server, the bound on any router")
    List<String> policies;

    @Option(
            names = "--duration",
            defaultValue = "5m",
            converter = DurationOption.class,
            description = "virtual time requests arrive, per run")
    Duration duration;

    @Option(
            names = "--drain",
            defaultValue = "1m",
            converter = DurationOption.class,
            description = "virtual time after the last arrival for requests to finish")
    Duration drain;

    @Option(names = "--threads", description = "fleets simulated at once (default: the machine's cores)")
    Integer threads;

    @Option(
            names = "--scrape-path",
            defaultValue = "snapshot",
            description = "text (render and parse every page) or snapshot (the same metrics, faster)")
    String scrapePath;

    @Option(names = "--out", defaultValue = "fleet-sweep-out", description = "directory for JSON and PNG files")
    Path out;

    @Option(
            names = "--reuse",
            description = "an earlier sweep's fleet-sweep.json: its runs of policies not named by "
                    + "--rerun are taken as they are (a run follows from its seed), the rest are simulated")
    Path reuse;

    @Option(
            names = "--rerun",
            split = ",",
            defaultValue = "patchbay",
            description = "with --reuse, the policies whose code changed since that sweep")
    List<String> rerun;

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(new picocli.CommandLine(new SweepCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        AcceptanceSweep sweep;
        try {
            sweep = sweep();
        } catch (IllegalArgumentException e) {
            if (spec == null) throw e;
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        PrintStream err = System.err;
        int runs = sweep.targets().size() * factors.size() * cvs.size() * seeds * policies.size();
        err.printf(
                Locale.ROOT,
                "sweep: %d runs of %s each on %d threads%n",
                runs,
                DurationOption.format(duration),
                sweep.threads());
        List<AcceptanceSweep.Row> earlier = reuse == null ? List.of() : earlierRows(reuse, rerun);
        if (reuse != null) err.printf(Locale.ROOT, "sweep: %d runs taken from %s%n", earlier.size(), reuse);
        List<AcceptanceSweep.Row> rows = sweep.run(err, earlier);
        List<AcceptanceSweep.Point> points = sweep.judge(rows);
        System.out.print(sweep.markdown(points));
        AcceptanceSweep.Point worst = AcceptanceSweep.worst(points);
        long missed = points.stream().filter(p -> !p.misses().isEmpty()).count();
        System.out.printf(
                Locale.ROOT,
                "%nworst point: %s x%s (%s req/s) %s: patchbay %s s against %s %s s (%.2fx)%n",
                worst.workload(),
                Report.number(worst.factor()),
                Report.number(worst.rate()),
                worst.arrivals(),
                Report.seconds(worst.ttft(Profiles.PATCHBAY)),
                worst.bestPeer(),
                Report.seconds(worst.ttft(worst.bestPeer())),
                worst.ratioToBestPeer());
        System.out.printf(Locale.ROOT, "targets met at %d of %d points%n", points.size() - missed, points.size());

        System.setProperty("java.awt.headless", "true");
        Files.createDirectories(out);
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("command", TypedCommand.of(spec, "sweep"));
        root.put("rows", rows);
        root.put("points", points);
        Path json = out.resolve("fleet-sweep.json");
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(json.toFile(), root);
        List<Path> charts = charts(sweep, points);
        err.println("wrote " + json + " and " + charts.size() + " charts in " + out);
        return 0;
    }

    /** The rows of an earlier sweep's JSON, without those of the policies to run again. */
    static List<AcceptanceSweep.Row> earlierRows(Path json, List<String> rerun) throws IOException {
        ObjectMapper mapper = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
        JsonNode rows = mapper.readTree(json.toFile()).get("rows");
        if (rows == null || !rows.isArray()) throw new IllegalArgumentException(json + " has no \"rows\" array");
        List<AcceptanceSweep.Row> kept = new ArrayList<>();
        for (JsonNode row : rows) {
            AcceptanceSweep.Row r = mapper.treeToValue(row, AcceptanceSweep.Row.class);
            if (!rerun.contains(r.result().policy())) kept.add(r);
        }
        return kept;
    }

    private List<Path> charts(AcceptanceSweep sweep, List<AcceptanceSweep.Point> points) throws IOException {
        List<Path> files = new ArrayList<>();
        for (AcceptanceSweep.Target t : sweep.targets()) {
            for (Arrivals a : sweep.arrivals()) {
                List<AcceptanceSweep.Point> line = points.stream()
                        .filter(p -> p.workload().equals(t.workload().name())
                                && p.arrivals().equals(a.label()))
                        .toList();
                if (line.isEmpty()) continue;
                Map<String, double[][]> series = new LinkedHashMap<>();
                for (String policy : policies) {
                    double[] xs = line.stream()
                            .mapToDouble(AcceptanceSweep.Point::factor)
                            .toArray();
                    double[] ys = line.stream().mapToDouble(p -> p.ttft(policy)).toArray();
                    series.put(policy, new double[][] {xs, ys});
                }
                String label = a.cv() == 1.0 ? "poisson" : "gamma-cv" + Report.number(a.cv());
                Path file = out.resolve("fleet-sweep-" + t.workload().name() + "-" + label + ".png");
                Charts.lines(
                        file,
                        String.format(
                                Locale.ROOT,
                                "TTFT p99 (median of %d seeds), %s, %s arrivals",
                                seeds,
                                t.workload().name(),
                                a.label()),
                        "load (x the operating rate of " + Report.number(t.operatingRate()) + " req/s)",
                        "TTFT p99 (s, log scale)",
                        series);
                files.add(file);
            }
        }
        return files;
    }

    private AcceptanceSweep sweep() {
        for (String p : List.of(Profiles.PATCHBAY, Profiles.GIE_LORA, Profiles.LLMD_LOAD_STATE, Profiles.ROUND_ROBIN)) {
            if (!policies.contains(p)) throw new IllegalArgumentException("--policies must include " + p);
        }
        for (String p : policies) {
            if (!p.equals(AcceptanceSweep.POOLED_IDEAL)) SimPolicy.check(p, null);
        }
        if (seeds < 1) throw new IllegalArgumentException("--seeds must be >= 1");
        List<AcceptanceSweep.Target> targets = new ArrayList<>();
        for (String w : workloads) {
            targets.add(AcceptanceSweep.Target.DEFAULT.stream()
                    .filter(t -> t.workload().name().equals(w))
                    .findFirst()
                    .orElseThrow(() ->
                            new IllegalArgumentException("--workloads takes gie-multilora and zipf, got '" + w + "'")));
        }
        List<Arrivals> arrivals = cvs.stream().map(Arrivals::new).toList();
        FleetSimulator.ScrapePath path = FleetSimulator.ScrapePath.parse(scrapePath);
        int t = threads != null ? threads : Runtime.getRuntime().availableProcessors();
        if (t < 1) throw new IllegalArgumentException("--threads must be >= 1");
        return new AcceptanceSweep(
                targets, factors, arrivals, seeds, policies, duration.toNanos(), drain.toNanos(), t, path);
    }
}
