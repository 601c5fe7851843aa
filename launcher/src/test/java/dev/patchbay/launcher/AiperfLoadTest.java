package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import dev.patchbay.launcher.load.AiperfReport;
import dev.patchbay.launcher.load.AiperfRun;
import dev.patchbay.launcher.load.SimTokenizerFiles;
import dev.patchbay.testkit.RequiredTool;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Needs {@code .patchbay/bin/aiperf}, which {@code scripts/third-party.sh} installs ({@link RequiredTool#thirdParty}:
 * skipped where absent on a developer's machine, failed under CI). About 20-40 s on two cores, most of it aiperf
 * starting its processes.
 *
 * <p>The real aiperf 0.13.0 sends a weighted stream over three adapters to one {@code patchbay serve} for a few
 * seconds, as the routing benchmark drives it: every request succeeds, every adapter is in the per-model figures, and
 * the server's own counters saw exactly the requests aiperf reports (warm-up included) with exactly the output tokens
 * asked for, and close to the prompt tokens aiperf cut with the simulated model's tokenizer file.
 */
class AiperfLoadTest {
    static final List<String> ADAPTERS = List.of("a0", "a1", "a2");
    static final int INPUT_TOKENS = 32, OUTPUT_TOKENS = 8, WARMUP = 6, REQUESTS = 60;

    @TempDir
    Path dir;

    final LauncherProcesses processes = new LauncherProcesses();

    @AfterEach
    void stop() throws InterruptedException {
        processes.close();
    }

    @Test
    void aWeightedStreamOverThreeAdaptersIsAllAnsweredAndCountedAlikeByAiperfAndTheServer() throws Exception {
        Path aiperf = RequiredTool.thirdParty("aiperf");
        SimAdapterServer server = new SimAdapterServer(
                        "aiperf", dir.resolve("adapters"), ADAPTERS, 2, 3, SimAdapterServer.SIM_LATENCY_MS)
                .writeAdapters();
        int port = LauncherProcesses.port(processes.launch(server.serveCommand(0)), LauncherProcesses.SERVING);

        AiperfRun run = AiperfRun.builder(aiperf, "http://127.0.0.1:" + port, dir.resolve("aiperf"))
                .tokenizer(SimTokenizerFiles.write(dir.resolve("tokenizer")))
                .model("a0", 3)
                .model("a1", 2)
                .model("a2", 1)
                .inputTokens(INPUT_TOKENS)
                .outputTokens(OUTPUT_TOKENS)
                .arrivals(AiperfRun.Arrivals.poisson(20))
                .requestCount(REQUESTS)
                .warmupRequests(WARMUP)
                .seed(7)
                .requestTimeout(Duration.ofSeconds(60))
                .build();
        AiperfReport report = AiperfReport.read(run.run());

        assertThat(report.aiperfVersion()).isEqualTo("0.13.0");
        assertThat(report.requests()).isEqualTo(REQUESTS);
        assertThat(report.errors()).as(report.summary()).isZero();
        assertThat(report.warmupRequests()).isEqualTo(WARMUP);
        assertThat(report.models()).containsOnlyKeys(ADAPTERS);
        report.models().forEach((model, figures) -> {
            assertThat(figures.requests()).as(model).isPositive();
            assertThat(figures.ttft().count()).as(model).isEqualTo(figures.requests());
            assertThat(figures.ttft().p50()).as(model).isPositive();
        });
        assertThat(report.ttft().p99()).isGreaterThanOrEqualTo(report.ttft().p50());

        // The server's counters: every request aiperf sent, warm-up included, and nothing else.
        int sent = report.requests() + report.warmupRequests();
        assertThat(processes.sample(port, "vllm:request_success_total", "")).isEqualTo(sent);
        assertThat(processes.sample(port, "vllm:request_success_total", "finished_reason=\"length\""))
                .isEqualTo(sent);
        // ignore_eos and max_tokens: exactly the output asked for.
        assertThat(processes.sample(port, "vllm:generation_tokens_total", "")).isEqualTo(sent * OUTPUT_TOKENS);
        // aiperf cuts prompts with the simulated model's tokenizer file and counts them as the server does, but a
        // prompt may come out a few tokens off the asked length (it decodes pieces of its corpus and counts again).
        assertThat(processes.sample(port, "vllm:prompt_tokens_total", ""))
                .isCloseTo(sent * (double) INPUT_TOKENS, withinPercentage(5));
    }
}
