package dev.patchbay.launcher.field;

import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where main code finds the field's programs that {@code scripts/third-party.sh} installs at pinned versions
 * ({@code envoy}, {@code vllm-router}, {@code llm-d-epp}, {@code llm-d-inference-sim}, {@code python}). In order:
 *
 * <ol>
 *   <li>the directory named by the environment variable {@value #ENV} ({@code ./patchbay} sets it to the checkout's
 *       {@code .patchbay/bin} for every command);
 *   <li>{@code .patchbay/bin} of the checkout found upward from the working directory, then from where this class was
 *       loaded (the jar in {@code launcher/target}, or its classes), so that a test JVM and {@code java -jar} outside
 *       the launcher script find the same programs;
 *   <li>{@code PATH}.
 * </ol>
 *
 * The pinned copy comes first: a program of another version on {@code PATH} is only used when none is installed.
 */
public final class FieldTools {
    /** The environment variable naming the directory of the installed programs. */
    public static final String ENV = "PATCHBAY_TOOLS";

    /** A program that is nowhere to be found; the message says how to install it. */
    public static final class MissingTool extends IllegalStateException {
        MissingTool(String message) {
            super(message);
        }
    }

    private FieldTools() {}

    /** The program {@code name}, or {@link MissingTool} naming where it was looked for and how to install it. */
    public static Path require(String name) {
        List<Path> looked = new ArrayList<>();
        Optional<Path> found = find(name, System.getenv(), Path.of(""), codeLocation(), looked);
        return found.orElseThrow(() -> new MissingTool(
                name + " is not installed (looked in " + looked + " and on PATH); " + "scripts/third-party.sh"
                        + part(name) + " installs it at its pinned version into .patchbay/bin"));
    }

    /** The program {@code name}, if it is installed anywhere this class looks. */
    public static Optional<Path> find(String name) {
        return find(name, System.getenv(), Path.of(""), codeLocation(), new ArrayList<>());
    }

    /**
     * The search itself, with its inputs given: the environment, the working directory and where the code was loaded
     * from (null when unknown). The directories looked in, before {@code PATH}, are added to {@code looked}.
     */
    static Optional<Path> find(
            String name, Map<String, String> env, Path workingDirectory, Path codeLocation, List<Path> looked) {
        List<Path> dirs = new ArrayList<>();
        String tools = env.get(ENV);
        if (tools != null && !tools.isBlank()) {
            dirs.add(Path.of(tools));
        }
        checkout(workingDirectory).ifPresent(root -> dirs.add(root.resolve(".patchbay/bin")));
        if (codeLocation != null) {
            checkout(codeLocation).ifPresent(root -> dirs.add(root.resolve(".patchbay/bin")));
        }
        for (Path dir : dirs) {
            if (!looked.contains(dir)) {
                looked.add(dir);
            }
            Path candidate = dir.resolve(name);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        for (String dir : env.getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
                return Optional.of(Path.of(dir, name));
            }
        }
        return Optional.empty();
    }

    /** The checkout holding {@code start}: the nearest directory up from it with {@code scripts/third-party.sh}. */
    static Optional<Path> checkout(Path start) {
        for (Path dir = start.toAbsolutePath().normalize(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("scripts/third-party.sh"))) {
                return Optional.of(dir);
            }
        }
        return Optional.empty();
    }

    /** The jar or class directory this class was loaded from, or null. */
    private static Path codeLocation() {
        try {
            CodeSource source = FieldTools.class.getProtectionDomain().getCodeSource();
            return source == null ? null : Path.of(source.getLocation().toURI());
        } catch (URISyntaxException | SecurityException | IllegalArgumentException e) {
            return null;
        }
    }

    /** The part of scripts/third-party.sh that installs {@code name}. */
    private static String part(String name) {
        return switch (name) {
            case "envoy", "vllm-router", "python" -> " python";
            case "llm-d-epp" -> " epp";
            case "llm-d-inference-sim" -> " sim";
            default -> "";
        };
    }
}
