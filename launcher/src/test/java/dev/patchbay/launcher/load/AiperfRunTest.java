package dev.patchbay.launcher.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.launcher.load.AiperfRun.Arrivals;
import dev.patchbay.launcher.load.AiperfRun.ModelShare;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AiperfRunTest {
    static final Path AIPERF = Path.of("/opt/aiperf/bin/aiperf");
    static final List<String> ADAPTERS =
            IntStream.range(0, 15).mapToObj(i -> "a" + i).toList();

    @TempDir
    Path tmp;

    @Test
    void threeWeightedAdaptersWithPoissonArrivalsAndACount() {
        AiperfRun run = AiperfRun.builder(AIPERF, "http://127.0.0.1:18000", Path.of("/tmp/out"))
                .tokenizer(Path.of("/tmp/tok"))
                .model("sql-lora", 3)
                .model("chat-lora", 2)
                .model("code-lora", 1)
                .inputTokens(32)
                .outputTokens(8)
                .arrivals(Arrivals.poisson(20))
                .requestCount(30)
                .warmupRequests(6)
                .seed(7)
                .datasetEntries(60)
                .build();
        // The command line of the run kept in test resources as aiperf/three-adapters.
        assertThat(String.join(" ", run.command()))
                .isEqualTo("/opt/aiperf/bin/aiperf profile --url http://127.0.0.1:18000 --endpoint-type completions"
                        + " --streaming -m sql-lora,chat-lora,sql-lora,code-lora,chat-lora,sql-lora"
                        + " --model-selection-strategy round-robin --tokenizer /tmp/tok --isl 32 --osl 8"
                        + " --extra-inputs ignore_eos:true --num-dataset-entries 60 --dataset-sampling-strategy shuffle"
                        + " --request-rate 20 --arrival-pattern poisson --request-count 30 --warmup-request-count 6"
                        + " --random-seed 7 --artifact-dir /tmp/out --ui none --no-server-metrics --no-gpu-telemetry"
                        + " --no-auto-plot");
    }

    @Test
    void theMultiLoraMixWithBurstyArrivalsForADuration() {
        AiperfRun run = AiperfRun.builder(AIPERF, "http://127.0.0.1:8080", Path.of("/tmp/out"))
                .tokenizer(Path.of("/tmp/tok"))
                .models(ModelShare.multiLoraMix(ADAPTERS))
                .inputTokens(64)
                .outputTokens(16)
                .arrivals(Arrivals.gamma(20, 0.25))
                .duration(Duration.ofSeconds(20), Duration.ofSeconds(10))
                .warmupRequests(20)
                .seed(7)
                .requestTimeout(Duration.ofSeconds(60))
                .build();
        List<String> c = run.command();
        assertThat(String.join(" ", c))
                .contains(" -m a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a0,a1,a2,a3,a4,a10,a11,a12,a13,a0,a1,a2,a3,a4,a5,a6,a7,"
                        + "a8,a9,a0,a1,a2,a3,a4,a14,a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,a0,a1,a2,a3,a4 ")
                .contains(" --num-dataset-entries 500 ")
                .contains(" --request-rate 20 --arrival-pattern gamma --arrival-smoothness 0.25 ")
                .contains(" --benchmark-duration 20 --benchmark-grace-period 10 ")
                .contains(" --warmup-request-count 20 ")
                .contains(" --request-timeout-seconds 60 ")
                .doesNotContain("--request-count");
        assertThat(run.defaultTimeout()).isGreaterThan(Duration.ofSeconds(30));
    }

    @Test
    void aCycleHoldsEachModelInItsShareAndNeverTwiceInARow() {
        List<String> cycle = AiperfRun.modelCycle(ModelShare.multiLoraMix(ADAPTERS));
        assertThat(cycle).hasSize(50);
        for (int i = 0; i < 15; i++) {
            // 12%, 6% and 2% of 50
            assertThat(Collections.frequency(cycle, "a" + i)).isEqualTo(i < 5 ? 6 : i < 10 ? 3 : 1);
        }
        for (int i = 0; i < cycle.size(); i++) {
            assertThat(cycle.get(i)).isNotEqualTo(cycle.get((i + 1) % cycle.size()));
        }
        assertThat(AiperfRun.modelCycle(List.of(new ModelShare("x", 4), new ModelShare("y", 4))))
                .containsExactly("x", "y");
    }

    @Test
    void theDefaultDatasetIsWholeCyclesOfAtLeastFiveHundred() {
        AiperfRun.Builder b = AiperfRun.builder(AIPERF, "http://h", tmp)
                .tokenizer("builtin")
                .requestCount(10)
                .model("x", 2)
                .model("y", 1);
        assertThat(b.build().effectiveDatasetEntries()).isEqualTo(501);
        assertThat(b.datasetEntries(30).build().effectiveDatasetEntries()).isEqualTo(30);
        assertThatThrownBy(() -> b.datasetEntries(31).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("multiple of the model cycle (3)");
    }

    @Test
    void refusesSettingsAiperfWouldMisread() {
        AiperfRun.Builder b = AiperfRun.builder(AIPERF, "http://h", tmp).tokenizer("builtin");
        assertThatThrownBy(() -> b.model("x", 1).build()).hasMessageContaining("either a duration or a request count");
        assertThatThrownBy(() -> new ModelShare("a,b", 1)).hasMessageContaining("without commas");
        assertThatThrownBy(() -> new ModelShare("a", 0)).hasMessageContaining("at least 1");
        assertThatThrownBy(() -> Arrivals.gamma(10, 0)).hasMessageContaining("smoothness");
        assertThatThrownBy(() -> Arrivals.poisson(0)).hasMessageContaining("rate");
        assertThatThrownBy(() -> ModelShare.multiLoraMix(List.of("a"))).hasMessageContaining("15 adapters");
        assertThatThrownBy(() -> AiperfRun.builder(AIPERF, "http://h", tmp)
                        .model("x", 1)
                        .requestCount(1)
                        .build())
                .hasMessageContaining("tokenizer");
    }

    /** A stand-in for aiperf: a shell script. */
    private Path script(String body) throws IOException {
        Path s = tmp.resolve("fake-aiperf");
        Files.writeString(s, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(s, PosixFilePermissions.fromString("rwxr-xr-x"));
        return s;
    }

    private AiperfRun fake(Path executable, Path dir) {
        return AiperfRun.builder(executable, "http://127.0.0.1:1", dir)
                .tokenizer("builtin")
                .model("x", 1)
                .requestCount(1)
                .build();
    }

    @Test
    void aNonZeroExitFailsWithTheLogsLastLines() throws Exception {
        Path dir = tmp.resolve("run");
        AiperfRun run =
                fake(script("echo starting; echo \"args: $*\"; echo 'Failed to load tokenizer' >&2; exit 3"), dir);
        assertThatThrownBy(() -> run.run(Duration.ofSeconds(30)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("aiperf exited with 3")
                .hasMessageContaining("Failed to load tokenizer")
                .hasMessageContaining("--request-count 1");
        assertThat(dir.resolve(AiperfRun.CONSOLE_LOG)).content().contains("starting");
    }

    @Test
    void aRunPastItsTimeoutIsStopped() throws Exception {
        Path dir = tmp.resolve("run");
        AiperfRun run = fake(script("echo waiting; sleep 60"), dir);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> run.run(Duration.ofMillis(500)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("did not end within")
                .hasMessageContaining("waiting");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void aSuccessfulRunReturnsItsDirectoryAndADirectoryWithResultsIsNotReused() throws Exception {
        Path dir = tmp.resolve("run");
        AiperfRun run = fake(script("echo \"HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-unset}\""), dir);
        assertThat(run.run(Duration.ofSeconds(30))).isEqualTo(dir);
        assertThat(dir.resolve(AiperfRun.CONSOLE_LOG)).content().contains("HF_HUB_OFFLINE=unset");

        Files.writeString(dir.resolve(AiperfReport.SUMMARY), "{}");
        assertThatThrownBy(() -> run.run(Duration.ofSeconds(30))).hasMessageContaining("already holds an aiperf run");
    }
}
