package dev.patchbay.launcher.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InferencePerfReportTest {
    @TempDir
    Path dir;

    /** Entries as inference-perf 0.7.0 writes them with the fields InferencePerfRun asks for (shortened). */
    private static String entry(double start, String adapter, Double ttftSeconds, boolean failed) {
        String info = "{\"request_metrics\": {\"text\": {\"input_tokens\": 64}}, \"lora_adapter\": "
                + (adapter == null ? "null" : "\"" + adapter + "\"") + "}";
        String metrics = ttftSeconds == null
                ? ""
                : ", \"computed_metrics\": {\"request_latency\": 0.2, \"time_to_first_token\": " + ttftSeconds + "}";
        String error = failed ? "{\"error_type\": \"ClientResponseError\", \"error_msg\": \"503\"}" : "null";
        return "{\"start_time\": " + start + ", \"end_time\": " + (start + 0.2) + ", \"info\": " + info + metrics
                + ", \"error\": " + error + "}";
    }

    private void write(List<String> entries) throws IOException {
        Files.writeString(dir.resolve(InferencePerfReport.PER_REQUEST), "[" + String.join(",\n", entries) + "]");
        Files.writeString(
                dir.resolve(InferencePerfReport.SUMMARY),
                "{\"benchmark_time_seconds\": 2.5, \"successes\": {\"count\": 4, \"throughput\":"
                        + " {\"requests_per_sec\": 1.6}}, \"failures\": {\"count\": 1}}");
    }

    @Test
    void readsRequestsErrorsAdaptersAndTimesToFirstToken() throws IOException {
        write(List.of(
                entry(100.0, "sql", 0.020, false),
                entry(100.5, "sql", 0.040, false),
                entry(101.0, "chat", 0.010, false),
                entry(101.5, "chat", null, true),
                entry(102.0, null, 0.030, false)));
        InferencePerfReport r = InferencePerfReport.read(dir, 7, "bench", "0.7.0");

        assertThat(r.tool()).isEqualTo("inference-perf 0.7.0");
        assertThat(r.requests()).isEqualTo(5);
        assertThat(r.errors()).isEqualTo(1);
        assertThat(r.unsent()).isEqualTo(2);
        assertThat(r.sentRate()).isCloseTo(2.0, within(1e-9)); // 4 gaps over 2 s
        assertThat(r.benchmarkSeconds()).isEqualTo(2.5);
        assertThat(r.requestThroughput()).isEqualTo(1.6);
        assertThat(r.ttft().count()).isEqualTo(4);
        assertThat(r.ttft().p50()).isCloseTo(20.0, within(1e-9));
        assertThat(r.ttft().p99()).isCloseTo(40.0, within(1e-9));
        assertThat(r.models()).containsOnlyKeys("sql", "chat", "bench");
        assertThat(r.models().get("chat").requests()).isEqualTo(2);
        assertThat(r.models().get("chat").errors()).isEqualTo(1);
        assertThat(r.models().get("chat").ttft().count()).isEqualTo(1);
        assertThat(r.ttftOf(List.of("sql")).p99()).isCloseTo(40.0, within(1e-9));
        assertThat(r.ttftOf(List.of("chat", "bench")).count()).isEqualTo(2);
        assertThat(r.summary())
                .contains("5 requests (1 failed, 2 planned but never sent)")
                .contains("sql: 2 requests");
    }

    @Test
    void aRunThatWroteNothingSaysSo() throws IOException {
        assertThatThrownBy(() -> InferencePerfReport.read(dir, 1, "bench", "0.7.0"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no summary_lifecycle_metrics.json")
                .hasMessageContaining("did inference-perf finish?");
        Files.writeString(dir.resolve(InferencePerfReport.SUMMARY), "{}");
        Files.writeString(dir.resolve(InferencePerfReport.PER_REQUEST), "{}");
        assertThatThrownBy(() -> InferencePerfReport.read(dir, 1, "bench", "0.7.0"))
                .hasMessageContaining("not a JSON array");
    }
}
