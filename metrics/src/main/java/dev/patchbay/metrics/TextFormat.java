package dev.patchbay.metrics;

import java.nio.charset.StandardCharsets;

/**
 * The pieces of the Prometheus text format 0.0.4 the cached writers render, as client_java's
 * {@code PrometheusTextFormatWriter} renders them: help texts with backslash and newline escaped, label values with
 * backslash, quote and newline escaped, values through {@link Double#toString(double)} with {@code +Inf}/{@code -Inf}.
 */
final class TextFormat {

    private TextFormat() {}

    /** The {@code # HELP} and {@code # TYPE} lines of a family. */
    static byte[] header(String sampleName, MetricType type, String help) {
        String header = "# HELP " + sampleName + " " + escapeHelp(help) + "\n# TYPE " + sampleName + " "
                + type.textName() + "\n";
        return header.getBytes(StandardCharsets.UTF_8);
    }

    static String formatValue(double v) {
        if (v == Double.POSITIVE_INFINITY) return "+Inf";
        if (v == Double.NEGATIVE_INFINITY) return "-Inf";
        return Double.toString(v);
    }

    static void escapeLabelValue(StringBuilder out, String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\\' -> out.append("\\\\");
                case '"' -> out.append("\\\"");
                case '\n' -> out.append("\\n");
                default -> out.append(c);
            }
        }
    }

    static String escapeHelp(String help) {
        return help.replace("\\", "\\\\").replace("\n", "\\n");
    }
}
