package dev.patchbay.server;

import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
            PeftWriter.write(dir, base, baseName, 8, 16, List.of("q_proj", "v_proj"), i + 1);
            out.add(new ServerOptions.LoraModule(name, dir, baseName));
        }
        return out;
    }
}
