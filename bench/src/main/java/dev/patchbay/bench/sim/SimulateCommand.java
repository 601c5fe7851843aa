package dev.patchbay.bench.sim;

import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.router.DurationOption;
import dev.patchbay.router.pick.profile.ProfileFile;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code patchbay simulate}: the fleet simulator. Runs the real engine and the real router pickers on one
 * virtual clock for every policy and rate, prints a Markdown table, writes JSON and PNG charts.
 */
@Command(
        name = "simulate",
        mixinStandardHelpOptions = true,
        description = "Simulate a fleet of Patchbay servers behind each routing policy over a sweep of request rates.")
public final class SimulateCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--workload", defaultValue = "gie-multilora", description = "gie-multilora, zipf or uniform")
    String workload;

    @Option(
            names = "--policies",
            split = ",",
            defaultValue = "round-robin,least-queue,gie-default,gie-lora,llmd-load-state,patchbay",
            description = "routing policies, comma-separated")
    List<String> policies;

    @Option(
            names = "--rates",
            split = ",",
            defaultValue = "10,20,40,60,80,100,120,140",
            description = "request rates (req/s), comma-separated")
    List<Double> rates;

    @Option(names = "--replicas", description = "replicas (default: the workload's, 10)")
    Integer replicas;

    @Option(
            names = "--duration",
            defaultValue = "10m",
            converter = DurationOption.class,
            description = "virtual time requests arrive (e.g. 30s, 10m, 1h)")
    Duration duration;

    @Option(
            names = "--drain",
            defaultValue = "2m",
            converter = DurationOption.class,
            description = "virtual time after the last arrival for requests to finish")
    Duration drain;

    @Option(names = "--seed", defaultValue = "1")
    long seed;

    @Option(names = "--adapters", description = "adapters (zipf: 1000, uniform: 100; gie-multilora has 15)")
    Integer adapters;

    @Option(names = "--zipf-s", defaultValue = "1.1", description = "Zipf exponent")
    double zipfS;

    @Option(names = "--max-loras", description = "batch slots per replica (gie-multilora 3, else 4)")
    Integer maxLoras;

    @Option(names = "--max-cpu-loras", description = "adapters in host memory per replica (gie-multilora 3, else 32)")
    Integer maxCpuLoras;

    @Option(names = "--arrivals", defaultValue = "poisson", description = "poisson or gamma")
    String arrivals;

    @Option(names = "--cv", defaultValue = "2", description = "coefficient of variation of gamma arrivals")
    double cv;

    @Option(names = "--prompt-mean", defaultValue = "220")
    double promptMean;

    @Option(names = "--output-mean", defaultValue = "190")
    double outputMean;

    @Option(names = "--length-sigma", defaultValue = "0.8", description = "log-normal sigma of both lengths")
    double lengthSigma;

    @Option(names = "--max-model-len", defaultValue = "4096")
    int maxModelLen;

    @Option(names = "--max-num-seqs", defaultValue = "256")
    int maxNumSeqs;

    @Option(names = "--kv-blocks", defaultValue = "8192", description = "KV blocks of 16 tokens per replica")
    int kvBlocks;

    @Option(names = "--step-overhead-ms", defaultValue = "5")
    double stepOverheadMs;

    @Option(names = "--prefill-token-ms", defaultValue = "0.1")
    double prefillTokenMs;

    @Option(names = "--decode-seq-ms", defaultValue = "0.2")
    double decodeSeqMs;

    @Option(names = "--adapter-ms", defaultValue = "0.5", description = "per distinct adapter in a batch")
    double adapterMs;

    @Option(names = "--load-from-storage-ms", defaultValue = "80")
    double loadFromStorageMs;

    @Option(names = "--load-into-slot-ms", defaultValue = "3")
    double loadIntoSlotMs;

    @Option(
            names = "--scrape-path",
            defaultValue = "snapshot",
            description = "text: each replica's /metrics page rendered and parsed, as the router reads it; snapshot: "
                    + "the same metrics built from the engine snapshot (faster, proven equal by the tests)")
    String scrapePath;

    @Option(names = "--scrape-interval", defaultValue = "50ms", converter = DurationOption.class)
    Duration scrapeInterval;

    @Option(
            names = "--profile-file",
            paramLabel = "FILE",
            description = "a profile file (router.json's profileFile format) whose profiles --policies may name beside "
                    + "the built-in ones; they run without slot wait")
    Path profileFile;

    @Option(
            names = "--stop-above",
            defaultValue = "60",
            description = "skip a policy's higher rates once its TTFT p99 exceeds this many seconds")
    double stopAbove;

    @Option(
            names = "--routers",
            defaultValue = "1",
            description = "independent routers in front of the fleet, each scraping on its own phase; requests go to "
                    + "them in turn, as a Kubernetes Service spreads them")
    int routers;

    @Option(names = "--out", defaultValue = "fleet-simulator-out", description = "directory for JSON and PNG files")
    Path out;

    /** Runs the simulator without the launcher: {@code java -cp ... dev.patchbay.bench.sim.SimulateCommand ...}. */
    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(new picocli.CommandLine(new SimulateCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Sweep sweep;
        try {
            sweep = sweep();
        } catch (IllegalArgumentException e) {
            if (spec == null) throw e;
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        SimSettings settings = sweep.settings();
        Workload w = settings.workload();
        Arrivals arrivalProcess = sweep.arrivals();
        PrintStream err = System.err;
        err.printf(
                "fleet: %s, %d adapters, %d replicas, max_loras %d, max_cpu_loras %d, %s arrivals, %s per rate%n",
                w.name(),
                w.adapters().size(),
                w.replicas(),
                w.maxLoras(),
                w.maxCpuLoras(),
                arrivalProcess.label(),
                DurationOption.format(duration));
        List<RunResult> results = sweep.run(err);

        System.out.print(Report.markdown(results));
        System.out.flush();
        Files.createDirectories(out);
        // Charts are drawn off-screen; this also works when the launcher did not set it.
        System.setProperty("java.awt.headless", "true");
        String prefix = "fleet-simulator-" + w.name();
        Path json = out.resolve(prefix + ".json");
        Report.writeJson(json, commandLine(), settingsMap(settings, arrivalProcess), results);
        Path ttft = out.resolve(prefix + "-ttft-p99.png");
        Path loads = out.resolve(prefix + "-loads.png");
        Charts.ttftP99(ttft, w.name(), results);
        Charts.loadsFromStorage(loads, w.name(), results);
        err.println("wrote " + json + ", " + ttft + ", " + loads);
        return 0;
    }

    /** The sweep the options describe; IllegalArgumentException for options that make no sense. */
    private Sweep sweep() {
        for (String p : policies) {
            SimPolicy.check(p, profiles());
        }
        Workload w = Workload.named(workload, adapters, zipfS).withSizing(maxLoras, maxCpuLoras, replicas);
        LatencyModel latency = LatencyModel.ofMillis(
                stepOverheadMs, prefillTokenMs, decodeSeqMs, adapterMs, loadFromStorageMs, loadIntoSlotMs);
        SimSettings settings = new SimSettings(
                w,
                latency,
                maxNumSeqs,
                kvBlocks,
                maxModelLen,
                scrapeInterval.toNanos(),
                duration.toNanos(),
                drain.toNanos());
        Arrivals arrivalProcess = switch (arrivals) {
            case "poisson" -> Arrivals.POISSON;
            case "gamma" -> new Arrivals(cv);
            default ->
                throw new IllegalArgumentException("--arrivals must be poisson or gamma, got '" + arrivals + "'");
        };
        for (double rate : rates) {
            if (!(rate > 0)) throw new IllegalArgumentException("rates must be > 0, got " + rate);
        }
        return new Sweep(
                settings,
                policies,
                rates,
                arrivalProcess,
                new Trace.Lengths(promptMean, outputMean, lengthSigma),
                profiles(),
                stopAbove,
                seed,
                scrapePath(),
                routers);
    }

    private FleetSimulator.ScrapePath scrapePath() {
        return FleetSimulator.ScrapePath.parse(scrapePath);
    }

    private ProfileFile profiles() {
        if (profileFile == null) {
            return null;
        }
        try {
            return ProfileFile.read(profileFile);
        } catch (IOException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    private String commandLine() {
        return TypedCommand.of(spec, "simulate");
    }

    private Map<String, Object> settingsMap(SimSettings s, Arrivals a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", s.workload().name());
        m.put("adapters", s.workload().adapters().size());
        m.put("replicas", s.workload().replicas());
        m.put("maxLoras", s.workload().maxLoras());
        m.put("maxCpuLoras", s.workload().maxCpuLoras());
        if (s.workload().name().equals(Workload.ZIPF)) m.put("zipfS", zipfS);
        m.put("arrivals", a.label());
        m.put("durationSeconds", s.durationNanos() / 1e9);
        m.put("drainSeconds", s.drainNanos() / 1e9);
        m.put("seed", seed);
        m.put("latency", s.latency());
        m.put("promptMean", promptMean);
        m.put("outputMean", outputMean);
        m.put("lengthSigma", lengthSigma);
        m.put("maxModelLen", s.maxModelLen());
        m.put("maxNumSeqs", s.maxNumSeqs());
        m.put("kvBlocks", s.numKvBlocks());
        m.put("scrapeSeconds", s.scrapeNanos() / 1e9);
        m.put("scrapePath", scrapePath);
        m.put("profileFile", profileFile == null ? null : profileFile.toString());
        m.put("stopAboveSeconds", stopAbove);
        return m;
    }
}
