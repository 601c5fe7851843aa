package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.testkit.Await;
import dev.patchbay.testkit.RequiredTool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The unmodified OpenAI SDK for Node (pinned in {@code src/test/node/package-lock.json}, installed by
 * {@code scripts/test-prereqs.sh}) reads log probabilities from both endpoints of a running server.
 */
class OpenAiSdkLogprobsTest {
    static final Path NODE_DIR = Path.of("src/test/node").toAbsolutePath();

    @TempDir
    Path dir;

    @Test
    void sdkReadsLogprobsFromCompletionsAndChat() throws Exception {
        Path node = RequiredTool.onPath("node", "Node.js 18 or newer");
        if (!Files.isRegularFile(NODE_DIR.resolve("node_modules/openai/package.json"))) {
            throw RequiredTool.missing("the OpenAI SDK is not installed (npm ci in " + NODE_DIR + ")");
        }
        try (ServerHarness h = new ServerHarness(dir, List.of(), "--sim-latency-ms", "0,0,0,0,0,0")) {
            Path log = dir.resolve("node-test.log");
            ProcessBuilder pb = new ProcessBuilder(node.toString(), "--test", "logprobs.test.mjs")
                    .directory(NODE_DIR.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            pb.environment().put("PATCHBAY_BASE_URL", h.base + "/v1");
            pb.environment().put("PATCHBAY_MODEL", "test-model");
            Process p = pb.start();
            try {
                Await.until("the SDK tests to finish", () -> !p.isAlive());
            } finally {
                p.destroyForcibly();
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(output).isZero();
            assertThat(output).contains("# pass 6").contains("# fail 0");
        }
    }
}
