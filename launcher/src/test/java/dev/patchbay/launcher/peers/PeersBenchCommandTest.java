package dev.patchbay.launcher.peers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.launcher.load.AiperfRun;
import dev.patchbay.launcher.load.LoadTool;
import dev.patchbay.launcher.load.Ttft;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class PeersBenchCommandTest {
    private static PeersBenchCommand parsed(String... args) {
        PeersBenchCommand command = new PeersBenchCommand();
        new CommandLine(command).parseArgs(args);
        return command;
    }

    @Test
    void stagesWithoutTheOperatingRateStillWarmUpAtIt() {
        PeersBenchCommand command = parsed("--factors", "1.25", "--bursty-smoothness", "0", "--stage-duration", "240s");
        PeersBench.Settings settings = command.settings();

        assertThat(settings.stages()).extracting(PeersBench.Stage::name).containsExactly("poisson x1.25");
        assertThat(settings.stages().getFirst().arrivals()).isEqualTo(AiperfRun.Arrivals.poisson(37.5));
        assertThat(settings.operating().name()).isEqualTo("poisson x1.00");
        assertThat(settings.operating().arrivals()).isEqualTo(AiperfRun.Arrivals.poisson(30));
        assertThat(command.commandLine()).contains("--factors 1.25 --bursty-smoothness 0.0 --stage-duration 240s");
    }

    @Test
    void theTwiceLowerTargetIsJudgedOnlyWhereTheOperatingStageRan() {
        PeersBench.Settings settings =
                parsed("--factors", "1.25", "--bursty-smoothness", "0").settings();
        List<StageResult> x125 =
                List.of(row("patchbay-picker", "poisson x1.25", 0.9), row("llm-d-lora", "poisson x1.25", 1.0));
        List<PeersReport.Verdict> verdicts =
                PeersReport.judge(new PeersBench.Results(settings, Map.of(), Map.of(), x125));
        assertThat(verdicts)
                .extracting(PeersReport.Verdict::target)
                .noneMatch(t -> t.contains("2x lower"))
                .anyMatch(t -> t.contains("never worse"));

        PeersBench.Settings withOperating =
                parsed("--factors", "1.0,1.25", "--bursty-smoothness", "0").settings();
        List<StageResult> x100 =
                List.of(row("patchbay-picker", "poisson x1.00", 0.4), row("llm-d-lora", "poisson x1.00", 1.0));
        assertThat(PeersReport.judge(new PeersBench.Results(withOperating, Map.of(), Map.of(), x100)))
                .filteredOn(v -> v.target().contains("2x lower"))
                .singleElement()
                .extracting(PeersReport.Verdict::met)
                .isEqualTo(true);
    }

    @Test
    void pickerReplicasAndFallbacksAreSettingsAndOnTheCommandLine() {
        assertThat(parsed().settings().pickers()).isEqualTo(BenchSetup.Pickers.GATEWAY);
        PeersBenchCommand command = parsed("--pickers", "2", "--ext-proc-fallbacks", "0");
        assertThat(command.settings().pickers()).isEqualTo(new BenchSetup.Pickers(2, 0));
        assertThat(command.commandLine()).endsWith("--pickers 2 --ext-proc-fallbacks 0");
    }

    @Test
    void aScrapeIntervalGoesToPatchbaysRoutesOnly() {
        assertThat(parsed().settings().routeArgs()).containsExactly("--placement", "off");
        PeersBenchCommand command = parsed("--scrape-interval", "10ms");
        assertThat(command.settings().routeArgs()).containsExactly("--placement", "off", "--scrape-interval", "10ms");
        assertThat(command.commandLine()).endsWith("--scrape-interval 10ms");
    }

    @Test
    void inferencePerfIsChosenByNameAndRefusesAGammaStage() {
        assertThat(parsed().settings().loadTool()).isEqualTo(LoadTool.AIPERF);
        assertThat(parsed().commandLine()).doesNotContain("--load-tool");

        PeersBenchCommand command = parsed("--load-tool", "inference-perf", "--bursty-smoothness", "0");
        assertThat(command.settings().loadTool()).isEqualTo(LoadTool.INFERENCE_PERF);
        assertThat(command.commandLine()).endsWith("--load-tool inference-perf");

        // The default stages end with a gamma stage, which inference-perf cannot send.
        assertThatThrownBy(() -> parsed("--load-tool", "inference-perf").settings())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not gamma")
                .hasMessageContaining("--bursty-smoothness 0");
        assertThatThrownBy(
                        () -> parsed("--load-tool", "inference-perf", "--bursty-smoothness", "0", "--warm-up", "1500ms")
                                .settings())
                .hasMessageContaining("whole seconds");
        assertThatThrownBy(() -> parsed("--load-tool", "wrk").settings())
                .hasMessageContaining("aiperf, inference-perf");
    }

    @Test
    void theStageTablesShowSlotRetriesAndUnsentRequestsWhereCounted() {
        PeersBench.Settings settings =
                parsed("--factors", "1.0", "--bursty-smoothness", "0").settings();
        Ttft ttft = new Ttft(100, 50, 100, 200);
        StageResult picker = new StageResult(
                "patchbay-picker", "poisson x1.00", 30, 30, 100, 0, 100, 30, ttft, Map.of(), 10, 10, 12L, 3);
        StageResult proxy = new StageResult(
                "patchbay-proxy", "poisson x1.00", 30, 30, 100, 0, 100, 30, ttft, Map.of(), 10, 10, null, 1);
        String md = PeersReport.markdown(
                new PeersBench.Results(settings, Map.of(), Map.of(), List.of(picker, proxy)), "cmd");
        assertThat(md).contains("| slot retries | never sent |");
        assertThat(md)
                .contains("| patchbay-picker | 30.0 | 30.0 | 0 | 50 | 200 | NaN | NaN | NaN | 10 | 10 | 12 | 3 |");
        assertThat(md).contains("| patchbay-proxy | 30.0 | 30.0 | 0 | 50 | 200 | NaN | NaN | NaN | 10 | 10 | - | 1 |");

        String aiperf = PeersReport.markdown(
                new PeersBench.Results(
                        settings, Map.of(), Map.of(), List.of(row("patchbay-proxy", "poisson x1.00", 200))),
                "cmd");
        assertThat(aiperf).contains("| slot retries |\n").doesNotContain("never sent");
    }

    private static StageResult row(String setup, String stage, double p99) {
        Ttft ttft = new Ttft(100, p99 / 10, p99 / 2, p99);
        return new StageResult(setup, stage, 30, 30, 100, 0, 100, 1000, ttft, Map.of(), 10, 10, null, null);
    }
}
