package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.launcher.conformance.CheckResult;
import dev.patchbay.launcher.conformance.ConformanceKit;
import dev.patchbay.launcher.conformance.ConformanceReport;
import dev.patchbay.launcher.conformance.WireChecks;
import dev.patchbay.launcher.gateway.EnvoyConfig.FailureMode;
import dev.patchbay.launcher.gateway.EnvoyProcess;
import dev.patchbay.router.pick.Endpoint;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conformance kit against real pickers behind a real Envoy, in front of three {@code patchbay serve} processes
 * whose four adapters fit their six batch slots: each picker is held to the checks it claims.
 */
class PickerConformanceTest {
    static final List<String> ADAPTERS = List.of("a0", "a1", "a2", "a3");

    @TempDir
    Path dir;

    final LauncherProcesses processes = new LauncherProcesses();
    final List<LauncherProcesses.Launched> servers = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        processes.close();
    }

    @Test
    void patchbaysPickerPassesEveryCheck() throws Exception {
        List<Integer> ports = startServers();
        try (EnvoyGateway gateway = new EnvoyGateway(processes, dir, ports, "{\"profile\": \"patchbay\"}")) {
            gateway.startPicker();
            EnvoyProcess envoy = gateway.startEnvoy(FailureMode.FAIL_CLOSE);
            ConformanceReport report = run(
                    "patchbay route --ext-proc-port", envoy, gateway.pool(), gateway.extProc(), gateway.healthPort());

            assertThat(report.checks())
                    .extracting(CheckResult::id)
                    .containsExactly(
                            WireChecks.HEALTH,
                            WireChecks.DESTINATION_AGREES,
                            WireChecks.BODY_RETURNED,
                            WireChecks.SUBSET_HINT,
                            WireChecks.SUBSET_NONE_ELIGIBLE,
                            ConformanceKit.ANSWERS,
                            ConformanceKit.REACHES_POOL,
                            ConformanceKit.ADAPTER_IN_SLOT,
                            ConformanceKit.BODY_INTACT,
                            ConformanceKit.NO_READY_ENDPOINT);
            assertThat(report.checks())
                    .allSatisfy(check -> assertThat(check.verdict())
                            .as(check.id() + ": " + check.detail())
                            .isEqualTo(CheckResult.Verdict.PASS));
        }
    }

    private List<Integer> startServers() throws Exception {
        SimAdapterServer server =
                new SimAdapterServer("conf", dir, ADAPTERS, 2, 4, SimAdapterServer.SIM_LATENCY_MS).writeAdapters();
        for (int i = 0; i < 3; i++) {
            servers.add(processes.launch(server.serveCommand(0)));
        }
        List<Integer> ports = new ArrayList<>();
        for (LauncherProcesses.Launched s : servers) {
            ports.add(LauncherProcesses.port(s, LauncherProcesses.SERVING));
        }
        return ports;
    }

    private ConformanceReport run(
            String picker, EnvoyProcess envoy, List<Endpoint> pool, Endpoint extProc, int healthPort) throws Exception {
        URI gateway = URI.create("http://127.0.0.1:" + envoy.listenerPort("gateway") + "/");
        ConformanceKit.Target target = ConformanceKit.Target.discover(gateway, pool);
        List<CheckResult> checks = new ArrayList<>(new WireChecks(extProc, healthPort, pool, target.baseModel()).run());
        ConformanceKit kit = new ConformanceKit(ConformanceKit.Settings.defaults(), System.out::println);
        checks.addAll(kit.run(target, () -> {
            for (LauncherProcesses.Launched s : servers) {
                s.process().destroy();
                s.process().waitFor();
            }
        }));
        ConformanceReport report = new ConformanceReport(picker, "Envoy", pool.size() + " patchbay serve", checks);
        System.out.println(report.toMarkdown());
        report.write(dir.resolve("report"));
        return report;
    }
}
