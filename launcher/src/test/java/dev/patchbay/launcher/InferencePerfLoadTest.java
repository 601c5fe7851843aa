package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.launcher.load.AiperfRun;
import dev.patchbay.launcher.load.InferencePerfReport;
import dev.patchbay.launcher.load.InferencePerfRun;
import dev.patchbay.launcher.load.SimTokenizerFiles;
import dev.patchbay.testkit.Await;
import dev.patchbay.testkit.RequiredTool;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Needs {@code .patchbay/bin/inference-perf}, which {@code scripts/third-party.sh} installs ({@link
 * RequiredTool#thirdParty}: skipped where absent on a developer's machine, failed under CI). About 15 s on two cores.
 *
 * <p>The real inference-perf 0.7.0 sends its synthetic stream over three adapters, in the shares of a {@code
 * lora_traffic_split}, to one {@code patchbay serve} for a few seconds, as the routing benchmark drives it: every
 * request it sent succeeds, and the server counted exactly those requests, per adapter, with exactly the prompt and
 * output tokens asked for (inference-perf cuts every prompt to the exact length or does not send it).
 */
class InferencePerfLoadTest {
    static final List<String> ADAPTERS = List.of("a0", "a1", "a2");
    static final int INPUT_TOKENS = 32, OUTPUT_TOKENS = 8;

    @TempDir
    Path dir;

    final LauncherProcesses processes = new LauncherProcesses();

    @AfterEach
    void stop() throws InterruptedException {
        processes.close();
    }

    @Test
    void aSplitStreamOverThreeAdaptersIsAnsweredAndCountedAlikeByInferencePerfAndTheServer() throws Exception {
        Path tool = RequiredTool.thirdParty("inference-perf");
        SimAdapterServer server = new SimAdapterServer(
                        "perf", dir.resolve("adapters"), ADAPTERS, 2, 3, SimAdapterServer.SIM_LATENCY_MS)
                .writeAdapters();
        int port = LauncherProcesses.port(processes.launch(server.serveCommand(0)), LauncherProcesses.SERVING);

        InferencePerfRun run = new InferencePerfRun(
                tool,
                "http://127.0.0.1:" + port,
                "perf",
                List.of(
                        new AiperfRun.ModelShare("a0", 3),
                        new AiperfRun.ModelShare("a1", 2),
                        new AiperfRun.ModelShare("a2", 1)),
                SimTokenizerFiles.write(dir.resolve("tokenizer")),
                INPUT_TOKENS,
                OUTPUT_TOKENS,
                AiperfRun.Arrivals.poisson(20),
                Duration.ofSeconds(3),
                7,
                dir.resolve("perf"));
        run.run();
        InferencePerfReport report = InferencePerfReport.read(run);

        assertThat(report.planned()).isEqualTo(60);
        assertThat(report.requests() + report.unsent()).isEqualTo(60);
        assertThat(report.requests()).as(report.summary()).isGreaterThanOrEqualTo(30);
        assertThat(report.errors()).as(report.summary()).isZero();
        assertThat(report.models()).containsOnlyKeys(ADAPTERS);
        report.models().forEach((model, figures) -> {
            assertThat(figures.ttft().count()).as(model).isEqualTo(figures.requests());
            assertThat(figures.ttft().p50()).as(model).isPositive();
        });
        assertThat(report.sentRate()).isPositive();

        // The server's counters: exactly the requests inference-perf reports, adapter by adapter (a server counts a
        // request as its answer ends, a moment after the client has it).
        int sent = report.requests();
        Await.until(
                "the server counts " + sent + " requests",
                () -> sample(port, "vllm:request_success_total", "") == sent,
                () -> sample(port, "vllm:request_success_total", ""));
        for (String adapter : ADAPTERS) {
            assertThat(processes.sample(port, "vllm:lora_requests_total", "lora_name=\"" + adapter + "\""))
                    .as(adapter)
                    .isEqualTo(report.models().get(adapter).requests());
        }
        assertThat(processes.sample(port, "vllm:generation_tokens_total", "")).isEqualTo(sent * OUTPUT_TOKENS);
        assertThat(processes.sample(port, "vllm:prompt_tokens_total", "")).isEqualTo(sent * INPUT_TOKENS);
    }

    private double sample(int port, String family, String label) {
        try {
            return processes.sample(port, family, label);
        } catch (Exception e) {
            return Double.NaN;
        }
    }
}
