package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.launcher.conformance.CheckResult;
import dev.patchbay.launcher.conformance.ConformanceKit;
import dev.patchbay.launcher.conformance.ConformanceReport;
import dev.patchbay.launcher.conformance.WireChecks;
import dev.patchbay.launcher.field.EnvoyFront;
import dev.patchbay.launcher.field.LlmdPicker;
import dev.patchbay.launcher.fleet.PatchbayRoute;
import dev.patchbay.launcher.fleet.SimFleet;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.testkit.RequiredTool;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conformance kit against real pickers behind a real Envoy, in front of three {@code patchbay serve} processes
 * (one loopback address each) whose four adapters fit their six batch slots: each picker is held to the checks it
 * claims.
 */
class PickerConformanceTest {
    static final SimFleet.Settings FLEET =
            new SimFleet.Settings(3, "conf", List.of("a0", "a1", "a2", "a3"), 2, 4, 16, "2,0.01,0.1,0.2,80,3", "256m");
    static final List<String> ALL_CHECKS = List.of(
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

    @TempDir
    Path dir;

    SimFleet fleet;

    @BeforeEach
    void startServers() throws Exception {
        fleet = SimFleet.start(FLEET, dir.resolve("fleet"));
    }

    @AfterEach
    void stopServers() {
        fleet.close();
    }

    @Test
    void patchbaysPickerPassesEveryCheck() throws Exception {
        Path envoyBinary = RequiredTool.thirdParty("envoy");
        try (PatchbayRoute picker = PatchbayRoute.start(fleet.servers(), "patchbay", true, dir.resolve("route"));
                EnvoyFront envoy = EnvoyFront.forPicker(
                        envoyBinary, picker.extProc(), picker.healthPort(), fleet.servers(), dir, picker.process())) {
            ConformanceReport report =
                    run("patchbay route (patchbay)", envoy.port(), picker.extProc(), picker.healthPort());

            assertThat(report.checks()).extracting(CheckResult::id).containsExactlyElementsOf(ALL_CHECKS);
            assertThat(report.checks()).allSatisfy(PickerConformanceTest::passed);
        }
    }

    @Test
    void llmdsPickerPassesTheProtocolChecks() throws Exception {
        Path envoyBinary = RequiredTool.thirdParty("envoy");
        Path epp = RequiredTool.thirdParty("llm-d-epp");
        try (LlmdPicker picker = LlmdPicker.start(
                        epp, LlmdPicker.Profile.LORA, fleet.servers(), dir, LlmdPicker.DEFAULT_VERBOSITY);
                EnvoyFront envoy = EnvoyFront.forPicker(envoyBinary, picker, dir)) {
            ConformanceReport report = run(
                    "llm-d epp v0.9.2 (LoRA profile)",
                    envoy.port(),
                    picker.extProc(),
                    picker.ports().health());

            assertThat(report.checks()).extracting(CheckResult::id).containsExactlyElementsOf(ALL_CHECKS);
            // Where adapters run is measured and reported, not claimed: epp sees only adapters with requests in
            // flight, so an adapter idle in a slot looks absent to it.
            assertThat(report.checks())
                    .filteredOn(check -> !check.id().equals(ConformanceKit.ADAPTER_IN_SLOT))
                    .allSatisfy(PickerConformanceTest::passed);
        }
    }

    private static void passed(CheckResult check) {
        assertThat(check.verdict()).as(check.id() + ": " + check.detail()).isEqualTo(CheckResult.Verdict.PASS);
    }

    private ConformanceReport run(String picker, int gatewayPort, Endpoint extProc, int healthPort) throws Exception {
        ConformanceKit.Target target =
                ConformanceKit.Target.discover(URI.create("http://127.0.0.1:" + gatewayPort + "/"), fleet.servers());
        List<CheckResult> checks =
                new ArrayList<>(new WireChecks(extProc, healthPort, fleet.servers(), target.baseModel()).run());
        ConformanceKit kit = new ConformanceKit(ConformanceKit.Settings.defaults(), System.out::println);
        checks.addAll(kit.run(target, fleet::stopAll));
        ConformanceReport report =
                new ConformanceReport(picker, "Envoy", fleet.servers().size() + " patchbay serve", checks);
        System.out.println(report.toMarkdown());
        report.write(dir.resolve("report"));
        return report;
    }
}
