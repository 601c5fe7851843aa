package dev.patchbay.bench.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {
    private static RunResult result(String policy, double rate, double ttftP99, long loads) {
        return new RunResult(
                "zipf",
                policy,
                rate,
                100,
                98,
                1,
                1,
                0.05,
                0.1,
                ttftP99,
                3.0,
                19_000,
                190.5,
                loads,
                2 * loads,
                loads,
                0,
                0.5,
                100,
                1,
                List.of(50, 50));
    }

    private final List<RunResult> results = List.of(
            result("gie-lora", 10, 0.4, 30),
            result("patchbay", 10, 0.2, 10),
            result("gie-lora", 20, 1.5, 0),
            result("patchbay", 20, 0.3, 12));

    @Test
    void markdownHasOneRowPerRunWithTheBenchColumns() {
        String md = Report.markdown(results);
        List<String> lines = md.lines().toList();
        assertThat(lines).hasSize(2 + results.size());
        assertThat(lines.get(0))
                .contains(
                        "TTFT p50 (s)",
                        "TTFT p99 (s)",
                        "e2e p99 (s)",
                        "output tok/s",
                        "completed",
                        "loads from storage",
                        "loads into slots",
                        "evictions slot / host",
                        "adapter already in slot");
        assertThat(lines.get(3))
                .isEqualTo(
                        "| zipf | patchbay | 10 | 0.050 | 0.100 | 0.200 | 3.000 | 191 | 98 | 1 / 1 | 10 | 20 | 10 / 0 | 50.0% |");
    }

    @Test
    void jsonCarriesCommandSettingsAndEveryResult(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("out.json");
        Report.writeJson(file, "patchbay simulate --workload zipf", Map.of("replicas", 10), results);
        JsonNode root = new ObjectMapper().readTree(file.toFile());
        assertThat(root.get("command").asText()).isEqualTo("patchbay simulate --workload zipf");
        assertThat(root.get("settings").get("replicas").asInt()).isEqualTo(10);
        assertThat(root.get("results")).hasSize(4);
        assertThat(root.get("results").get(1).get("ttftP99").asDouble()).isEqualTo(0.2);
    }

    @Test
    void chartsAreWrittenAsPng(@TempDir Path dir) throws Exception {
        System.setProperty("java.awt.headless", "true");
        Path ttft = dir.resolve("ttft.png"), loads = dir.resolve("loads.png");
        Charts.ttftP99(ttft, "zipf", results);
        Charts.loadsFromStorage(loads, "zipf", results);
        for (Path png : List.of(ttft, loads)) {
            byte[] head = Arrays.copyOf(Files.readAllBytes(png), 4);
            assertThat(head).containsExactly(0x89, 'P', 'N', 'G');
        }
    }
}
