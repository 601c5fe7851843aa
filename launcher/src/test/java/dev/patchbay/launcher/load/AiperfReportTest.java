package dev.patchbay.launcher.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.patchbay.bench.sim.Percentiles;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads artifact directories of real aiperf 0.13.0 runs against {@code patchbay serve} (the simulated model with its
 * demo adapters), kept as they were written but for the files the report does not read (logs, CSV, console text):
 *
 * <ul>
 *   <li>{@code aiperf/three-adapters}: sql-lora, chat-lora, code-lora weighted 3:2:1, Poisson at 20/s, 6 warm-up
 *       requests then 30, 32 tokens in and 8 out, seed 7, a dataset of 60;
 *   <li>{@code aiperf/with-errors}: sql-lora and an adapter the server does not know (no-such-lora), 1:1, 10
 *       requests: five answered 404.
 * </ul>
 *
 * <p>The expected figures were computed from the same files by a separate script (nearest rank on the sorted TTFTs).
 */
class AiperfReportTest {
    @TempDir
    Path tmp;

    static Path resource(String name) throws URISyntaxException {
        return Path.of(AiperfReportTest.class.getResource("/aiperf/" + name).toURI());
    }

    @Test
    void readsAWeightedThreeAdapterRun() throws Exception {
        AiperfReport r = AiperfReport.read(resource("three-adapters"));

        assertThat(r.aiperfVersion()).isEqualTo("0.13.0");
        assertThat(r.requests()).isEqualTo(30);
        assertThat(r.errors()).isZero();
        assertThat(r.warmupRequests()).isEqualTo(6);
        assertThat(r.benchmarkSeconds()).isCloseTo(1.919164, within(1e-6));
        assertThat(r.requestThroughput()).isCloseTo(14.979635, within(1e-6));
        assertThat(r.outputTokenThroughput()).isCloseTo(119.837078, within(1e-6));
        assertThat(r.sentRate()).isCloseTo(15.541645, within(1e-6));

        assertThat(r.ttft().count()).isEqualTo(30);
        assertThat(r.ttft().p50()).isCloseTo(13.505233, within(1e-6));
        assertThat(r.ttft().p90()).isCloseTo(18.286743, within(1e-6));
        assertThat(r.ttft().p99()).isCloseTo(24.944411, within(1e-6));
        // aiperf interpolates between ranks: close to nearest rank, not the same.
        assertThat(r.aiperfTtft().count()).isEqualTo(30);
        assertThat(r.aiperfTtft().p50()).isCloseTo(13.784061, within(1e-6));
        assertThat(r.aiperfTtft().p99()).isCloseTo(23.576557, within(1e-6));

        assertThat(r.models()).containsOnlyKeys("chat-lora", "code-lora", "sql-lora");
        assertThat(r.models().get("sql-lora").requests()).isEqualTo(13);
        assertThat(r.models().get("chat-lora").requests()).isEqualTo(9);
        assertThat(r.models().get("code-lora").requests()).isEqualTo(8);
        assertThat(r.models().values().stream().mapToInt(ModelFigures::requests).sum())
                .isEqualTo(r.requests());
        ModelFigures chat = r.models().get("chat-lora");
        assertThat(chat.errors()).isZero();
        assertThat(chat.ttft().count()).isEqualTo(9);
        assertThat(chat.ttft().p50()).isCloseTo(16.614983, within(1e-6));
        assertThat(chat.ttft().p99()).isCloseTo(24.944411, within(1e-6));
        assertThat(r.models().get("code-lora").ttft().p50()).isCloseTo(11.584674, within(1e-6));
        assertThat(r.models().get("sql-lora").ttft().p90()).isCloseTo(19.455059, within(1e-6));
        assertThat(r.models().get("sql-lora").ttft().p99()).isCloseTo(20.227672, within(1e-6));

        assertThat(r.summary()).contains("30 requests (0 failed, 6 warm-up)").contains("sql-lora: 13 requests");
    }

    @Test
    void countsFailedRequestsOverallAndPerModel() throws Exception {
        AiperfReport r = AiperfReport.read(resource("with-errors"));

        assertThat(r.requests()).isEqualTo(10);
        assertThat(r.errors()).isEqualTo(5);
        assertThat(r.warmupRequests()).isZero();
        // TTFT is over the successful requests only, as aiperf's own figures are.
        assertThat(r.ttft().count()).isEqualTo(5);
        assertThat(r.aiperfTtft().count()).isEqualTo(5);
        assertThat(r.ttft().p50()).isCloseTo(11.589261, within(1e-6));

        ModelFigures missing = r.models().get("no-such-lora");
        assertThat(missing.requests()).isEqualTo(5);
        assertThat(missing.errors()).isEqualTo(5);
        assertThat(missing.ttft().count()).isZero();
        assertThat(missing.ttft().p50()).isNaN();
        ModelFigures sql = r.models().get("sql-lora");
        assertThat(sql.requests()).isEqualTo(5);
        assertThat(sql.errors()).isZero();
        assertThat(sql.ttft().p99()).isCloseTo(19.336423, within(1e-6));
    }

    @Test
    void nearestRankIsTheValueAtRankCeilPN() {
        double[] oneToTen = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        assertThat(Percentiles.nearestRank(oneToTen, 50)).isEqualTo(5);
        assertThat(Percentiles.nearestRank(oneToTen, 90)).isEqualTo(9);
        assertThat(Percentiles.nearestRank(oneToTen, 99)).isEqualTo(10);
        assertThat(Percentiles.nearestRank(oneToTen, 100)).isEqualTo(10);
        assertThat(Percentiles.nearestRank(new double[] {7}, 1)).isEqualTo(7);
        assertThat(Percentiles.nearestRank(new double[0], 50)).isNaN();
    }

    @Test
    void aDirectoryWithoutAFinishedRunSaysWhatIsMissing() throws Exception {
        assertThatThrownBy(() -> AiperfReport.read(tmp))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(AiperfReport.SUMMARY);
    }

    @Test
    void aRecordWhoseRequestIsNotInTheInputsIsAnError() throws Exception {
        Path source = resource("with-errors");
        for (String f : List.of(AiperfReport.SUMMARY, AiperfReport.RECORDS)) {
            Files.copy(source.resolve(f), tmp.resolve(f));
        }
        Files.writeString(tmp.resolve(AiperfReport.INPUTS), "{\"data\": []}");
        assertThatThrownBy(() -> AiperfReport.read(tmp))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("is not in inputs.json");
    }
}
