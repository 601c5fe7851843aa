package dev.patchbay.engine;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * This build's version, as the build wrote it into {@code version.properties} from the parent pom's {@code revision},
 * the one place it is declared: the server's {@code /version}, the metrics' deprecation clock and the command line's
 * {@code --version} all read it here.
 */
public final class PatchbayVersion {
    public static final String VERSION = read();

    private PatchbayVersion() {}

    private static String read() {
        try (InputStream in = PatchbayVersion.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                throw new IllegalStateException("version.properties is missing beside " + PatchbayVersion.class);
            }
            Properties properties = new Properties();
            properties.load(in);
            String version = properties.getProperty("version", "");
            if (version.isBlank() || version.contains("${")) {
                throw new IllegalStateException("version.properties was not filled in by the build: '" + version + "'");
            }
            return version;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
