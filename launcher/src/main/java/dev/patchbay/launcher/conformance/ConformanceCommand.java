package dev.patchbay.launcher.conformance;

import dev.patchbay.engine.PatchbayVersion;
import dev.patchbay.launcher.field.EnvoyFront;
import dev.patchbay.launcher.field.FieldTools;
import dev.patchbay.launcher.field.LlmdPicker;
import dev.patchbay.launcher.fleet.PatchbayRoute;
import dev.patchbay.launcher.fleet.SimFleet;
import dev.patchbay.launcher.gateway.EnvoyProcess;
import dev.patchbay.router.pick.Endpoint;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code patchbay conformance}: the conformance kit for endpoint pickers, without a cluster. It puts a real Envoy
 * (deploy/envoy/envoy.yaml) in front of the picker, speaks to the picker's ext_proc port as Envoy does, sends OpenAI
 * traffic through the gateway and judges where it went by the model servers' own counters.
 */
@Command(
        name = "conformance",
        mixinStandardHelpOptions = true,
        description = "Check an endpoint picker against the Endpoint Picker Protocol through a real Envoy, and report.")
public final class ConformanceCommand implements Callable<Integer> {
    static final SimFleet.Settings DEFAULT_FLEET = new SimFleet.Settings(
            3, "conformance", List.of("a0", "a1", "a2", "a3"), 2, 4, 16, "2,0.01,0.1,0.2,80,3", "256m");

    @Option(
            names = "--picker",
            defaultValue = "patchbay",
            paramLabel = "patchbay|llm-d|llm-d-default|HOST:PORT",
            description = "The picker to check: Patchbay's router or llm-d's epp (LoRA or default profile) started "
                    + "here over servers started here, or the ext_proc address of a picker already running over "
                    + "--servers (default ${DEFAULT-VALUE}).")
    String picker;

    @Option(
            names = "--picker-health-port",
            defaultValue = "9003",
            description = "With a picker address: its gRPC health port, 0 for its ext_proc port (default "
                    + "${DEFAULT-VALUE}).")
    int pickerHealthPort;

    @Option(
            names = "--servers",
            split = ",",
            paramLabel = "IP:PORT",
            description = "With a picker address: the model servers it routes to (IP literals, vLLM's metrics). "
                    + "Their adapters must fit their batch slots for adapter-in-slot to mean anything.")
    List<String> servers;

    @Option(
            names = "--profile",
            defaultValue = "patchbay",
            description = "With --picker patchbay: the router's profile (default ${DEFAULT-VALUE}).")
    String profile;

    @Option(
            names = "--out",
            defaultValue = "conformance-report",
            description =
                    "Where conformance.md, conformance.json and the processes' logs go (default ${DEFAULT-VALUE}).")
    Path out;

    @Override
    public Integer call() throws Exception {
        boolean external = !List.of("patchbay", "llm-d", "llm-d-default").contains(picker);
        if (external != (servers != null)) {
            throw new CommandLine.ParameterException(
                    new CommandLine(this),
                    external
                            ? "a picker address needs --servers, the model servers it routes to"
                            : "--servers goes with a picker address; --picker " + picker + " starts its own servers");
        }
        Path envoyBinary = FieldTools.require("envoy");
        List<AutoCloseable> started = new ArrayList<>();
        try {
            SimFleet fleet = null;
            List<Endpoint> pool;
            if (external) {
                pool = servers.stream().map(Endpoint::parse).toList();
            } else {
                fleet = SimFleet.start(DEFAULT_FLEET, out.resolve("fleet"));
                started.add(fleet);
                pool = fleet.servers();
            }
            Endpoint extProc;
            int healthPort;
            String name;
            EnvoyFront envoy;
            switch (picker) {
                case "patchbay" -> {
                    PatchbayRoute route = PatchbayRoute.start(pool, profile, true, out.resolve("route"));
                    started.add(0, route);
                    extProc = route.extProc();
                    healthPort = route.healthPort();
                    name = "Patchbay " + PatchbayVersion.VERSION + " (profile " + profile + ")";
                    envoy = EnvoyFront.forPicker(envoyBinary, extProc, healthPort, pool, out, route.process());
                }
                case "llm-d", "llm-d-default" -> {
                    LlmdPicker.Profile llmdProfile =
                            picker.equals("llm-d") ? LlmdPicker.Profile.LORA : LlmdPicker.Profile.DEFAULT;
                    LlmdPicker epp = LlmdPicker.start(llmdProfile, pool, out);
                    started.add(0, epp);
                    extProc = epp.extProc();
                    healthPort = epp.ports().health();
                    name = FieldTools.require("llm-d-epp").toRealPath().getFileName() + " ("
                            + llmdProfile.name().toLowerCase(Locale.ROOT) + " profile)";
                    envoy = EnvoyFront.forPicker(envoyBinary, epp, out);
                }
                default -> {
                    extProc = Endpoint.parse(picker);
                    healthPort = pickerHealthPort;
                    name = "the picker at " + picker;
                    envoy = EnvoyFront.forPicker(envoyBinary, extProc, healthPort, pool, out, null);
                }
            }
            started.add(0, envoy);
            URI gateway = URI.create("http://127.0.0.1:" + envoy.port() + "/");
            ConformanceKit.Target target = ConformanceKit.Target.discover(gateway, pool);
            System.err.println(
                    "checking " + name + " behind Envoy on " + gateway + " over " + pool.size() + " servers ("
                            + target.baseModel() + ", " + target.adapters().size() + " adapters)");
            List<CheckResult> checks =
                    new ArrayList<>(new WireChecks(extProc, healthPort, pool, target.baseModel()).run());
            SimFleet owned = fleet;
            checks.addAll(new ConformanceKit(ConformanceKit.Settings.defaults(), System.err::println)
                    .run(target, owned == null ? null : owned::stopAll));
            ConformanceReport report = new ConformanceReport(
                    name,
                    "Envoy " + EnvoyProcess.versionNumber(envoyBinary),
                    pool.size() + (external ? " servers" : " patchbay serve (simulated model)"),
                    checks);
            report.write(out);
            System.out.print(report.toMarkdown());
            System.err.println("wrote " + out.resolve("conformance.md") + " and " + out.resolve("conformance.json"));
            boolean failed = checks.stream().anyMatch(c -> c.verdict() == CheckResult.Verdict.FAIL);
            return failed ? 1 : 0;
        } finally {
            for (AutoCloseable part : started) {
                part.close();
            }
        }
    }
}
