package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.launcher.fleet.SimFleet;
import dev.patchbay.launcher.load.AiperfRun;
import dev.patchbay.launcher.peers.BenchSetup;
import dev.patchbay.launcher.peers.PeersBench;
import dev.patchbay.launcher.peers.PeersReport;
import dev.patchbay.launcher.peers.StageResult;
import dev.patchbay.testkit.RequiredTool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The peers benchmark in small: one short Poisson stage from aiperf through one setup of each kind of front (Envoy
 * with Patchbay's picker, Patchbay's proxy, Envoy with llm-d's picker, vllm-router, Envoy alone), each over two fresh
 * {@code patchbay serve} processes with the gateway's 15-adapter mix. It asserts only what cannot flake: every
 * request on every path succeeded, and the servers' own counters saw every one of them. Where adapters landed is
 * {@code PickerConformanceTest}'s to check; how fast is the benchmark's to measure.
 */
class PeersBenchSmokeTest {
    @TempDir
    Path dir;

    @Test
    void everyRequestOnEveryPathSucceedsAndReachesAServer() throws Exception {
        for (String tool : List.of("aiperf", "envoy", "llm-d-epp", "vllm-router")) {
            RequiredTool.thirdParty(tool);
        }
        List<String> adapters = new ArrayList<>();
        for (String tier : List.of("hot", "warm", "cold")) {
            for (int i = 1; i <= 5; i++) {
                adapters.add(tier + "-" + i);
            }
        }
        List<BenchSetup> setups = List.of(
                BenchSetup.PATCHBAY_PICKER,
                BenchSetup.PATCHBAY_PROXY,
                BenchSetup.LLMD_LORA,
                BenchSetup.VLLM_ROUTER_ROUND_ROBIN,
                BenchSetup.ENVOY_ROUND_ROBIN);
        PeersBench.Stage operating =
                new PeersBench.Stage("poisson x1.00", AiperfRun.Arrivals.poisson(8), Duration.ofSeconds(6));
        PeersBench.Settings settings = new PeersBench.Settings(
                new SimFleet.Settings(2, "smoke", adapters, 2, 4, 16, "2,0.01,0.1,0.2,40,3", "256m"),
                setups,
                List.of(operating),
                operating,
                Duration.ZERO,
                32,
                4,
                7,
                5);

        PeersBench.Results results = new PeersBench(settings, dir, System.out::println).run(Map.of());

        assertThat(results.stages())
                .extracting(StageResult::setup)
                .containsExactlyElementsOf(setups.stream().map(BenchSetup::id).toList());
        assertThat(results.stages()).allSatisfy(stage -> {
            assertThat(stage.requests()).as(stage.setup() + ": requests").isGreaterThan(20);
            assertThat(stage.errors()).as(stage.setup() + ": failed requests").isZero();
            assertThat(stage.served())
                    .as(stage.setup() + ": requests the servers counted")
                    .isEqualTo(stage.requests());
        });
        assertThat(results.stages())
                .as("Envoy's retries on a slot refusal are counted where Patchbay's picker is behind it")
                .allSatisfy(stage -> assertThat(stage.slotRetries() != null)
                        .isEqualTo(stage.setup().equals(BenchSetup.PATCHBAY_PICKER.id())));
        assertThat(results.addedLatency())
                .containsOnlyKeys(setups.stream().map(BenchSetup::id).toList());
        assertThat(Files.readString(dir.resolve("peers-bench.json"))).contains("\"served\"");
        assertThat(PeersReport.markdown(results, "smoke")).contains("| llm-d-lora |");
    }
}
