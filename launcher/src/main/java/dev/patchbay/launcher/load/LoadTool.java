package dev.patchbay.launcher.load;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The load tools the routing benchmark can drive, by the program name each has in {@code .patchbay/bin}. */
public enum LoadTool {
    AIPERF("aiperf", "0.13.0"),
    INFERENCE_PERF("inference-perf", InferencePerfRun.VERSION);

    private final String program;
    private final String version;

    LoadTool(String program, String version) {
        this.program = program;
        this.version = version;
    }

    public String program() {
        return program;
    }

    /** The version the project's install script pins. */
    public String version() {
        return version;
    }

    public static LoadTool byProgram(String name) {
        return Arrays.stream(values())
                .filter(t -> t.program.equals(name.toLowerCase(Locale.ROOT)))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no load tool '" + name + "'; known: "
                        + Arrays.stream(values()).map(LoadTool::program).collect(Collectors.joining(", "))));
    }
}
