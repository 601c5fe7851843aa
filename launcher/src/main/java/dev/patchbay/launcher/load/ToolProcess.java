package dev.patchbay.launcher.load;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a load tool to its end, its console output in a log file, stopping it and its workers on a timeout. */
final class ToolProcess {
    private static final int LOG_TAIL_LINES = 40;

    private ToolProcess() {}

    /**
     * Starts {@code builder} (input from /dev/null, output and errors to {@code log}) and waits for it. Fails with the
     * exit code and the log's last lines when it exits non-zero or overruns {@code timeout}; then it and every process
     * it started are stopped, as they are when the wait is interrupted.
     */
    static void run(ProcessBuilder builder, Path log, Duration timeout, String name)
            throws IOException, InterruptedException {
        Process process = builder.redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        boolean ended;
        try {
            ended = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            stop(process);
            throw e;
        }
        if (!ended) {
            stop(process);
            throw new IOException(name + " did not end within " + timeout.toSeconds() + " s; stopped. Last lines of "
                    + log + ":\n" + tail(log));
        }
        if (process.exitValue() != 0) {
            throw new IOException(
                    name + " exited with " + process.exitValue() + ". Last lines of " + log + ":\n" + tail(log));
        }
    }

    private static void stop(Process process) throws InterruptedException {
        List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
        process.destroy();
        all.forEach(ProcessHandle::destroy);
        if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly();
        for (ProcessHandle p : all) {
            try {
                p.onExit().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                p.destroyForcibly();
            }
        }
    }

    static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
