package dev.patchbay.bench.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class SimulateCommandTest {

    @Test
    void aTinySweepPrintsTheTableAndWritesJsonAndCharts(@TempDir Path dir) {
        PrintStream stdout = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        int code;
        try {
            System.setOut(new PrintStream(captured, true));
            code = new CommandLine(new SimulateCommand())
                    .setErr(new PrintWriter(new ByteArrayOutputStream()))
                    .execute(
                            "--workload",
                            "gie-multilora",
                            "--replicas",
                            "2",
                            "--policies",
                            "round-robin,patchbay",
                            "--rates",
                            "5",
                            "--duration",
                            "5s",
                            "--out",
                            dir.toString());
        } finally {
            System.setOut(stdout);
        }
        assertThat(code).isZero();
        assertThat(captured.toString())
                .contains("| gie-multilora | round-robin | 5 |", "| gie-multilora | patchbay | 5 |");
        assertThat(dir.resolve("fleet-simulator-gie-multilora.json")).isNotEmptyFile();
        assertThat(dir.resolve("fleet-simulator-gie-multilora-ttft-p99.png")).isNotEmptyFile();
        assertThat(dir.resolve("fleet-simulator-gie-multilora-loads.png")).isNotEmptyFile();
    }

    @Test
    void anUnknownWorkloadOrPolicyIsAUsageError() {
        CommandLine cli = new CommandLine(new SimulateCommand()).setErr(new PrintWriter(new ByteArrayOutputStream()));
        assertThat(cli.execute("--workload", "nope")).isEqualTo(2);
        assertThat(cli.execute("--policies", "fastest")).isEqualTo(2);
        StringWriter bare = new StringWriter();
        CommandLine strict = new CommandLine(new SimulateCommand()).setErr(new PrintWriter(bare));
        assertThat(strict.execute("--scrape-interval", "50"))
                .as("a bare number means no unit")
                .isEqualTo(2);
        assertThat(strict.execute("--duration", "600")).isEqualTo(2);
        assertThat(bare.toString()).contains("'50' has no unit", "'600' has no unit");
        assertThat(Files.exists(Path.of("fleet-simulator-out"))).isFalse();
    }
}
