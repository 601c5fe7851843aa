package dev.patchbay.bench.sim;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The fleet simulator's outputs: the Markdown table and the JSON file. */
public final class Report {
    private Report() {}

    public static String markdown(List<RunResult> results) {
        StringBuilder sb = new StringBuilder();
        sb.append("| workload | policy | rate (req/s) | TTFT p50 (s) | TTFT p90 (s) | TTFT p99 (s) | e2e p99 (s) "
                + "| output tok/s | completed | failed / unfinished | loads from storage | loads into slots "
                + "| evictions slot / host | adapter already in slot |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (RunResult r : results) {
            sb.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %s | %s | %.0f | %d | %d / %d | %d | %d | %d / %d | %s |%n",
                    r.workload(),
                    r.policy(),
                    number(r.rate()),
                    seconds(r.ttftP50()),
                    seconds(r.ttftP90()),
                    seconds(r.ttftP99()),
                    seconds(r.e2eP99()),
                    r.outputTokensPerSecond(),
                    r.completed(),
                    r.failed(),
                    r.unfinished(),
                    r.loadsFromStorage(),
                    r.loadsIntoSlots(),
                    r.slotEvictions(),
                    r.hostEvictions(),
                    Double.isNaN(r.slotHitShare())
                            ? "-"
                            : String.format(Locale.ROOT, "%.1f%%", 100 * r.slotHitShare())));
        }
        return sb.toString();
    }

    static String seconds(double s) {
        if (Double.isNaN(s)) return "-";
        if (s < 10) return String.format(Locale.ROOT, "%.3f", s);
        return String.format(Locale.ROOT, "%.1f", s);
    }

    static String number(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%s", v);
    }

    /** Writes the settings, the command line and every result. */
    public static void writeJson(Path file, String commandLine, Map<String, Object> settings, List<RunResult> results)
            throws IOException {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("command", commandLine);
        root.put("settings", settings);
        root.put("results", results);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), root);
    }
}
