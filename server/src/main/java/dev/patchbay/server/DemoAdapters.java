package dev.patchbay.server;

import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Writes the quick start's demo adapters: real PEFT directories for the simulated model. */
final class DemoAdapters {
    static final List<String> NAMES = List.of("sql-lora", "chat-lora", "code-lora", "summarize-lora", "translate-lora");

    private DemoAdapters() {}

    static Path defaultRoot() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path cache = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return cache.resolve("patchbay").resolve("demo-adapters");
    }

    /** Writes (or reuses) {@code count} adapters under {@code root}; returns name and directory of each. */
    static List<ServerOptions.LoraModule> write(Path root, int count, ModelConfig base, String baseName)
            throws IOException {
        List<ServerOptions.LoraModule> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String name = i < NAMES.size() ? NAMES.get(i) : "demo-lora-" + i;
            Path dir = root.resolve(name);
            // Rewritten each start: cheap, and always matches the current simulated model's shapes.
            writeInPlace(dir, base, baseName, i + 1);
            out.add(new ServerOptions.LoraModule(name, dir, baseName));
        }
        return out;
    }

    /**
     * Servers started together on one machine share the directory: each writes a whole copy beside it and renames
     * its files over the old ones, so a server loading an adapter reads one whole file, never one half rewritten.
     */
    private static void writeInPlace(Path dir, ModelConfig base, String baseName, long seed) throws IOException {
        Files.createDirectories(dir);
        Path staging = Files.createTempDirectory(dir.getParent(), "." + dir.getFileName() + "-");
        try {
            PeftWriter.write(staging, base, baseName, 8, 16, List.of("q_proj", "v_proj"), seed);
            for (String file : List.of(PeftReader.CONFIG_FILE, PeftReader.WEIGHTS_FILE)) {
                Files.move(
                        staging.resolve(file),
                        dir.resolve(file),
                        StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            try (Stream<Path> left = Files.list(staging)) {
                for (Path p : left.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(staging);
        }
    }
}
