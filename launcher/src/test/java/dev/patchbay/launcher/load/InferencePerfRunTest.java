package dev.patchbay.launcher.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.patchbay.launcher.load.AiperfRun.Arrivals;
import dev.patchbay.launcher.load.AiperfRun.ModelShare;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InferencePerfRunTest {
    static final Path TOOL = Path.of("/opt/perf/bin/inference-perf");
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @TempDir
    Path tmp;

    private InferencePerfRun run(Path executable, List<ModelShare> models, Arrivals arrivals, Duration duration) {
        return new InferencePerfRun(
                executable,
                "http://127.0.0.1:18000",
                "bench",
                models,
                Path.of("/tmp/tok"),
                64,
                16,
                arrivals,
                duration,
                7,
                tmp.resolve("out"));
    }

    @Test
    void theConfigurationNamesTheServerTheStreamTheStageAndTheReports() throws IOException {
        InferencePerfRun run = run(
                TOOL,
                List.of(new ModelShare("sql", 3), new ModelShare("chat", 2), new ModelShare("code", 1)),
                Arrivals.poisson(30),
                Duration.ofSeconds(120));
        JsonNode c = YAML.readTree(run.config());

        assertThat(c.at("/api/type").asText()).isEqualTo("completion");
        assertThat(c.at("/api/streaming").asBoolean()).isTrue();
        assertThat(c.at("/server/type").asText()).isEqualTo("vllm");
        assertThat(c.at("/server/model_name").asText()).isEqualTo("bench");
        assertThat(c.at("/server/base_url").asText()).isEqualTo("http://127.0.0.1:18000");
        assertThat(c.at("/server/ignore_eos").asBoolean()).isTrue();
        assertThat(c.at("/tokenizer/pretrained_model_name_or_path").asText()).isEqualTo("/tmp/tok");
        assertThat(c.at("/data/type").asText()).isEqualTo("synthetic");
        assertThat(c.at("/data/input_distribution/type").asText()).isEqualTo("fixed");
        assertThat(c.at("/data/input_distribution/min").asInt()).isEqualTo(64);
        assertThat(c.at("/data/input_distribution/max").asInt()).isEqualTo(64);
        assertThat(c.at("/data/output_distribution/mean").asInt()).isEqualTo(16);
        assertThat(c.at("/load/type").asText()).isEqualTo("poisson");
        assertThat(c.at("/load/base_seed").asLong()).isEqualTo(7);
        assertThat(c.at("/load/stages")).hasSize(1);
        assertThat(c.at("/load/stages/0/rate").asDouble()).isEqualTo(30.0);
        assertThat(c.at("/load/stages/0/duration").asInt()).isEqualTo(120);
        assertThat(c.at("/load/lora_traffic_split/0/name").asText()).isEqualTo("sql");
        assertThat(c.at("/load/lora_traffic_split/0/split").asDouble()).isEqualTo(0.5);
        assertThat(c.at("/load/lora_traffic_split/2/name").asText()).isEqualTo("code");
        assertThat(c.at("/report/request_lifecycle/per_request").asBoolean()).isTrue();
        assertThat(c.at("/report/request_lifecycle/per_request_fields/request").asBoolean())
                .isFalse();
        assertThat(c.at("/report/request_lifecycle/per_request_fields/computed_metrics")
                        .asBoolean())
                .isTrue();
        assertThat(c.at("/storage/local_storage/path").asText())
                .isEqualTo(tmp.resolve("out").toString());
        assertThat(run.plannedRequests()).isEqualTo(3600);
    }

    @Test
    void theBaseModelAloneHasNoSplitAndNoAdapterReports() throws IOException {
        JsonNode c = YAML.readTree(run(TOOL, List.of(), Arrivals.constant(2.5), Duration.ofSeconds(3))
                .config());
        assertThat(c.at("/load/type").asText()).isEqualTo("constant");
        assertThat(c.at("/load/lora_traffic_split").isMissingNode()).isTrue();
        assertThat(c.at("/report/request_lifecycle/per_adapter").asBoolean()).isFalse();
        // int(2.5 * 3), as inference-perf plans a stage.
        assertThat(run(TOOL, List.of(), Arrivals.constant(2.5), Duration.ofSeconds(3))
                        .plannedRequests())
                .isEqualTo(7);
    }

    @Test
    void pythonsSumIsCompensated() {
        // Python 3.13: sum([0.1] * 10) and sum([0.12] * 5 + [0.06] * 5 + [0.02] * 5) are both 1.0, where a plain
        // left-to-right sum gives 0.9999999999999999 and 1.0000000000000002.
        double[] tenths = new double[10];
        java.util.Arrays.fill(tenths, 0.1);
        assertThat(InferencePerfRun.pythonSum(tenths)).isEqualTo(1.0);
        double[] mix = {0.12, 0.12, 0.12, 0.12, 0.12, 0.06, 0.06, 0.06, 0.06, 0.06, 0.02, 0.02, 0.02, 0.02, 0.02};
        assertThat(InferencePerfRun.pythonSum(mix)).isEqualTo(1.0);
        double[] nudged = mix.clone();
        nudged[14] = 0.019999999999999907;
        assertThat(InferencePerfRun.pythonSum(nudged)).isEqualTo(0.9999999999999999);
    }

    @Test
    void splitsAddUpToExactlyOneInFloatingPointAsInferencePerfDemands() {
        List<String> fifteen = IntStream.range(0, 15).mapToObj(i -> "a" + i).toList();
        for (List<ModelShare> models : List.of(
                ModelShare.multiLoraMix(fifteen),
                List.of(new ModelShare("a", 1), new ModelShare("b", 1), new ModelShare("c", 1)),
                IntStream.range(1, 40).mapToObj(i -> new ModelShare("m" + i, i)).toList())) {
            double[] splits = InferencePerfRun.splits(models);
            assertThat(InferencePerfRun.pythonSum(splits)).as(models.toString()).isEqualTo(1.0);
            int total = models.stream().mapToInt(ModelShare::weight).sum();
            for (int i = 0; i < splits.length; i++) {
                assertThat(splits[i])
                        .isCloseTo((double) models.get(i).weight() / total, org.assertj.core.data.Offset.offset(1e-12));
            }
        }
    }

    @Test
    void refusesWhatInferencePerfCannotRun() {
        List<ModelShare> one = List.of(new ModelShare("a", 1));
        assertThatThrownBy(() -> run(TOOL, one, Arrivals.gamma(10, 0.25), Duration.ofSeconds(10)))
                .hasMessageContaining("not gamma");
        assertThatThrownBy(() -> run(TOOL, one, Arrivals.poisson(10), Duration.ofMillis(1500)))
                .hasMessageContaining("whole seconds");
        assertThatThrownBy(() -> run(TOOL, one, Arrivals.poisson(0.5), Duration.ofSeconds(1)))
                .hasMessageContaining("under one request");
    }

    private Path script(String body) throws IOException {
        Path s = tmp.resolve("fake-inference-perf");
        Files.writeString(s, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(s, PosixFilePermissions.fromString("rwxr-xr-x"));
        return s;
    }

    @Test
    void aRunWritesItsConfigurationAndFailsWithTheLogsLastLinesOnANonZeroExit() throws Exception {
        InferencePerfRun run = run(
                script("echo \"config: $2\"; cat \"$2\" | grep -c base_url; echo 'Stage 0 failed' >&2; exit 4"),
                List.of(new ModelShare("a", 1)),
                Arrivals.poisson(5),
                Duration.ofSeconds(2));
        assertThatThrownBy(() -> run.run(Duration.ofSeconds(30)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("inference-perf exited with 4")
                .hasMessageContaining("Stage 0 failed");
        Path dir = tmp.resolve("out");
        assertThat(dir.resolve(InferencePerfRun.CONFIG)).content().isEqualTo(run.config());
        assertThat(dir.resolve(InferencePerfRun.CONSOLE_LOG))
                .content()
                .contains("config: " + dir.resolve(InferencePerfRun.CONFIG))
                .contains("1\n");
    }

    @Test
    void aSuccessfulRunIsOfflineAndADirectoryWithResultsIsNotReused() throws Exception {
        InferencePerfRun run = run(
                script("echo \"HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-unset}\""),
                List.of(new ModelShare("a", 1)),
                Arrivals.poisson(5),
                Duration.ofSeconds(2));
        Path dir = tmp.resolve("out");
        assertThat(run.run(Duration.ofSeconds(30))).isEqualTo(dir);
        assertThat(dir.resolve(InferencePerfRun.CONSOLE_LOG)).content().contains("HF_HUB_OFFLINE=1");

        Files.writeString(dir.resolve(InferencePerfReport.SUMMARY), "{}");
        assertThatThrownBy(() -> run.run(Duration.ofSeconds(30)))
                .hasMessageContaining("already holds an inference-perf run");
    }
}
