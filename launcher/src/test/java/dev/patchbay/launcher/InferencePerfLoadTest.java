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
 * <p>The real inference-perf 0.7.0 sends its synthetic stream over the gateway's multi-LoRA mix (15 adapters at 12%,
 * 6% and 2%, a {@code lora_traffic_split} it accepts only if Python adds it up to exactly 1.0) to one {@code patchbay
 * serve} for a few seconds, as the routing benchmark drives it: every request it sent succeeds, and the server counted exactly those requests, per adapter, with exactly the prompt and
 * output tokens asked for (inference-perf cuts every prompt to the exact length or does not send it).
 */
class InferencePerfLoadTest {
    static final List<String> ADAPTERS =
            java.util.stream.IntStream.range(0, 15).mapToObj(i -> "a" + i).toList();
    static final int INPUT_TOKENS = 32, OUTPUT_TOKENS = 8;

    @TempDir
    Path dir;

    final LauncherProcesses processes = new LauncherProcesses();

    @AfterEach
    void stop() throws InterruptedException {
        processes.close();
    }

    @Test
    void theMultiLoraMixIsAnsweredAndCountedAlikeByInferencePerfAndTheServer() throws Exception {
        Path tool = RequiredTool.thirdParty("inference-perf");
        // Host memory for all 15: an adapter's per-adapter series leave the page when it is evicted and idle, and this
        // test reads them after the run.
        SimAdapterServer server = new SimAdapterServer(
                        "perf", dir.resolve("adapters"), ADAPTERS, 2, ADAPTERS.size(), SimAdapterServer.SIM_LATENCY_MS)
                .writeAdapters();
        int port = LauncherProcesses.port(processes.launch(server.serveCommand(0)), LauncherProcesses.SERVING);

        InferencePerfRun run = new InferencePerfRun(
                tool,
                "http://127.0.0.1:" + port,
                "perf",
                AiperfRun.ModelShare.multiLoraMix(ADAPTERS),
                SimTokenizerFiles.write(dir.resolve("tokenizer")),
                INPUT_TOKENS,
                OUTPUT_TOKENS,
                AiperfRun.Arrivals.poisson(30),
                Duration.ofSeconds(4),
                7,
                dir.resolve("perf"));
        run.run();
        InferencePerfReport report = InferencePerfReport.read(run);

        assertThat(report.planned()).isEqualTo(120);
        assertThat(report.requests() + report.unsent()).isEqualTo(120);
        assertThat(report.requests()).as(report.summary()).isGreaterThanOrEqualTo(60);
        assertThat(report.errors()).as(report.summary()).isZero();
        // Adapters are drawn at random in their shares: a 2% one may get no request in a run this short.
        assertThat(ADAPTERS).containsAll(report.models().keySet());
        assertThat(report.models().size()).isGreaterThan(5);
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
            var figures = report.models().get(adapter);
            assertThat(processes.sample(port, "vllm:lora_requests_total", "lora_name=\"" + adapter + "\""))
                    .as(adapter)
                    .isEqualTo(figures == null ? 0 : figures.requests());
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
