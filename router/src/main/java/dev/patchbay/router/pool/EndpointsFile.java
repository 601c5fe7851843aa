package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;

/**
 * Endpoints listed in a file, re-read when its modification time or size changes. A file that
 * cannot be read or parsed raises an error and the pool keeps its previous list.
 */
public final class EndpointsFile implements EndpointSource {
    private final Path file;
    private Object lastKey;
    private List<Endpoint> endpoints = List.of();

    public EndpointsFile(Path file) {
        this.file = file;
    }

    @Override
    public synchronized List<Endpoint> current() throws IOException {
        BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
        Object key = List.of(
                attributes.lastModifiedTime(),
                attributes.size(),
                attributes.fileKey() == null ? "" : attributes.fileKey());
        if (!key.equals(lastKey)) {
            try {
                endpoints = EndpointSource.parseList(Files.readString(file, StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                throw new IOException("bad endpoints file " + file + ": " + e.getMessage(), e);
            }
            lastKey = key;
        }
        return endpoints;
    }
}
