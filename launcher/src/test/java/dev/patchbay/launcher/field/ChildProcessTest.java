package dev.patchbay.launcher.field;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.testkit.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The supervisor of the field's programs: output to a log, readiness with a bound, the whole tree stopped. */
class ChildProcessTest {
    @TempDir
    Path dir;

    @Test
    void aProgramThatExitsBeforeItIsReadyFailsTheWaitAtOnceWithItsLastWords() throws Exception {
        Path log = dir.resolve("logs/dying.log");
        try (ChildProcess child = ChildProcess.start(
                "dying", List.of("sh", "-c", "echo starting; echo 'bind: address in use' >&2; exit 3"), log)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> child.awaitTrue("listen", Duration.ofMinutes(5), () -> false))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("dying exited with 3 before listen")
                    .hasMessageContaining("bind: address in use")
                    .hasMessageContaining(log.toString());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMinutes(1));
            Await.until("the log is written", () -> {
                try {
                    return Files.readString(log).equals("starting\nbind: address in use\n");
                } catch (IOException e) {
                    return false;
                }
            });
        }
    }

    @Test
    void aWaitReturnsTheProbesValueAndReportsItsLastErrorWhenItNeverComes() throws Exception {
        try (ChildProcess child = ChildProcess.start("sleeper", List.of("sleep", "600"), null)) {
            int[] polls = {0};
            assertThat(child.await("count", Duration.ofMinutes(1), () -> ++polls[0] == 3 ? "ready" : null))
                    .isEqualTo("ready");
            assertThatThrownBy(() -> child.awaitTrue("answer", Duration.ofMillis(200), () -> {
                        throw new IOException("connection refused");
                    }))
                    .hasMessageContaining("sleeper did not answer within 0 s")
                    .hasMessageContaining("connection refused");
        }
    }

    @Test
    void closeStopsTheProgramAndWhatItStarted() throws Exception {
        ChildProcess child = ChildProcess.start("parent", List.of("sh", "-c", "sleep 600 & echo child $!; wait"), null);
        long grandchild = child.await(
                "report its child",
                Duration.ofMinutes(1),
                () -> child.lines().stream()
                        .filter(l -> l.startsWith("child "))
                        .map(l -> Long.parseLong(l.substring("child ".length())))
                        .findFirst()
                        .orElse(null));
        assertThat(ProcessHandle.of(grandchild)).isPresent();

        child.close();

        assertThat(child.isAlive()).isFalse();
        assertThat(ProcessHandle.of(grandchild).map(ProcessHandle::isAlive).orElse(false))
                .as("the program's own child")
                .isFalse();
        child.close(); // again: nothing left to stop
    }
}
