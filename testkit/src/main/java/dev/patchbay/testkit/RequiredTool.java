package dev.patchbay.testkit;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import org.opentest4j.TestAbortedException;

/**
 * An outside program a test runs (promtool, prometheus, python3 with a module). Where it is missing the test is
 * skipped on a developer's machine, but fails under CI (the environment variable {@code CI} is set), whose
 * {@code scripts/test-prereqs.sh} installs it: a CI run never passes by skipping.
 */
public final class RequiredTool {
    private RequiredTool() {}

    /** The program {@code name} on {@code PATH} (or in /usr/bin). */
    public static Path onPath(String name, String installHint) {
        for (String dir : (System.getenv().getOrDefault("PATH", "") + File.pathSeparator + "/usr/bin")
                .split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw missing(name + " is not installed (" + installHint + ")");
    }

    /**
     * A program of the field that {@code scripts/third-party.sh} installs at a pinned version into the checkout's
     * {@code .patchbay/bin} ({@code envoy}, {@code vllm-router}, {@code python}, {@code llm-d-inference-sim},
     * {@code llm-d-epp}). Main code finds the same programs with {@code dev.patchbay.launcher.field.FieldTools}.
     */
    public static Path thirdParty(String name) {
        Path program = repositoryRoot().resolve(".patchbay/bin").resolve(name);
        if (!Files.isExecutable(program)) {
            throw missing(name + " is not installed (" + program + "; scripts/third-party.sh installs it)");
        }
        return program;
    }

    /** The checkout's root: the nearest directory up from the working directory that holds scripts/third-party.sh. */
    public static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("scripts/third-party.sh"))) {
                return dir;
            }
        }
        throw new AssertionError(
                "no scripts/third-party.sh above " + Path.of("").toAbsolutePath());
    }

    /** A test's way to say a tool it needs is absent: skipped locally, failed under CI. */
    public static RuntimeException missing(String why) {
        if (underCi()) {
            throw new AssertionError(why + "; CI must have it (scripts/test-prereqs.sh installs it)");
        }
        throw new TestAbortedException(why);
    }

    public static boolean underCi() {
        String ci = System.getenv("CI");
        return ci != null && !ci.isEmpty() && !ci.equalsIgnoreCase("false");
    }
}
