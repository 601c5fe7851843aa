package dev.patchbay.server;

import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Runs the real {@code promtool check metrics}; CI installs it (scripts/test-prereqs.sh), so there it must exist. */
final class PromtoolCheck {
    private PromtoolCheck() {}

    /** Where promtool is; skips the test where it is missing, but fails it under CI ({@link RequiredTool}). */
    static Path promtool() {
        return RequiredTool.onPath("promtool", "Debian package 'prometheus'");
    }

    /**
     * promtool's complaints about the page, or "" when it accepts it. It exits 3 for lint problems; two lint rules
     * contradict vLLM's own names, which dashboards and routers rely on, and are accepted: colons in names and the
     * histogram vllm:iteration_tokens_total ending in _total.
     */
    static String check(Path page) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(promtool().toString(), "check", "metrics")
                .redirectErrorStream(true)
                .redirectInput(page.toFile())
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return "promtool timed out";
        }
        if (p.exitValue() != 0 && p.exitValue() != 3) return "exit " + p.exitValue() + ": " + out;
        StringBuilder problems = new StringBuilder();
        for (String line : out.split("\n")) {
            if (line.isBlank()
                    || line.matches("^vllm:\\S+ metric names should not contain ':'$")
                    || line.equals("vllm:iteration_tokens_total non-counter metrics should not have \"_total\" suffix"))
                continue;
            problems.append(line).append('\n');
        }
        return problems.toString();
    }
}
