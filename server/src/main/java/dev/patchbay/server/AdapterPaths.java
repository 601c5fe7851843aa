package dev.patchbay.server;

import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.AdapterException.Kind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Keeps adapter paths inside the directories the operator allowed. Paths are resolved to their real location
 * first, so neither {@code ..} nor a symbolic link can lead outside.
 */
final class AdapterPaths {
    private final List<Path> roots = new ArrayList<>();

    AdapterPaths(List<Path> allowed) {
        for (Path p : allowed) {
            try {
                roots.add(p.toRealPath());
            } catch (IOException e) {
                roots.add(p.toAbsolutePath().normalize());
            }
        }
    }

    List<Path> roots() {
        return roots;
    }

    /** The adapter directory's real path, if it lies under an allowed root. */
    Path confine(String requested) throws AdapterException {
        Path p;
        try {
            p = Path.of(requested);
        } catch (RuntimeException e) {
            throw new AdapterException(Kind.INVALID, "Invalid adapter path: " + requested);
        }
        if (!Files.exists(p)) throw new AdapterException(Kind.NOT_FOUND, "No adapter found for " + requested);
        Path real;
        try {
            real = p.toRealPath();
        } catch (IOException e) {
            throw new AdapterException(Kind.NOT_FOUND, "No adapter found for " + requested);
        }
        for (Path root : roots) if (real.startsWith(root)) return real;
        throw new AdapterException(
                Kind.INVALID,
                "The adapter path " + requested
                        + " is outside the directories allowed for adapters (--lora-allowed-dirs)");
    }
}
