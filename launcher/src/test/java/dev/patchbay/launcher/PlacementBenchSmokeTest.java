package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The placement benchmark in small, through its command line: placement off and on, each over three fresh {@code
 * patchbay serve} processes behind {@code patchbay route}, with windows of a few seconds. It asserts only what cannot
 * flake: the report has both setups, no request failed, and with placement on the router started loads. How even the
 * servers are and how fast placement follows are the benchmark's to measure, not this test's.
 */
class PlacementBenchSmokeTest {
    @TempDir
    Path dir;

    @Test
    void bothSetupsRunWithoutFailuresAndPlacementLoadsAdapters() throws Exception {
        int exit = new CommandLine(new Main())
                .execute(
                        "bench-placement",
                        "--setups",
                        "placement-off,placement-on",
                        "--servers",
                        "2",
                        "--sim-latency-ms",
                        "2,0.01,0.1,0.2,40,3",
                        "--rate",
                        "15",
                        "--output-tokens",
                        "4",
                        "--warm-up",
                        "3s",
                        "--window",
                        "3s",
                        "--shift",
                        "3s",
                        "--out",
                        dir.toString());

        assertThat(exit).isZero();
        String report = Files.readString(dir.resolve("placement-bench.md"));
        assertThat(report).contains("### placement-off").contains("### placement-on");
        assertThat(dir.resolve("placement-bench.png")).exists();
        var json = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(dir.resolve("placement-bench.json").toFile());
        assertThat(json.get("setups")).hasSize(2);
        long placementLoads = 0;
        for (var setup : json.get("setups")) {
            for (var phase : setup.get("phases")) {
                assertThat(phase.get("failed").asInt())
                        .as(setup.get("setup").asText() + " "
                                + phase.get("phase").asText() + ": failed requests")
                        .isZero();
                assertThat(phase.get("sent").asInt()).isPositive();
                if (setup.get("setup").asText().equals("placement-on")) {
                    placementLoads += phase.get("placementLoads").asLong();
                }
            }
        }
        assertThat(placementLoads)
                .as("loads placement started with placement on")
                .isPositive();
    }
}
