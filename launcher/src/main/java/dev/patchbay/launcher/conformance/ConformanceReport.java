package dev.patchbay.launcher.conformance;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * One run of the kit against one picker: what was checked, with which parts, and how each check went.
 *
 * @param picker    the picker checked, as the operator named it (with its version where known)
 * @param dataPlane the gateway in front of it (Envoy's version)
 * @param servers   the model servers behind it
 */
public record ConformanceReport(String picker, String dataPlane, String servers, List<CheckResult> checks) {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    public ConformanceReport {
        checks = List.copyOf(checks);
    }

    public boolean passed(String id) {
        return checks.stream().anyMatch(c -> c.id().equals(id) && c.verdict() == CheckResult.Verdict.PASS);
    }

    public String toMarkdown() {
        StringBuilder out = new StringBuilder();
        out.append("# Endpoint picker conformance: ").append(picker).append("\n\n");
        out.append("Data plane: ")
                .append(dataPlane)
                .append(". Model servers: ")
                .append(servers)
                .append(".\n\n");
        out.append("| check | verdict | what was seen | requirement |\n|---|---|---|---|\n");
        for (CheckResult c : checks) {
            out.append("| `")
                    .append(c.id())
                    .append("` | ")
                    .append(c.verdict())
                    .append(" | ")
                    .append(cell(c.detail()))
                    .append(" | ")
                    .append(cell(c.requirement()))
                    .append(" |\n");
        }
        return out.toString();
    }

    /** Writes {@code conformance.json} and {@code conformance.md} into {@code dir}. */
    public void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        JSON.writeValue(dir.resolve("conformance.json").toFile(), this);
        Files.writeString(dir.resolve("conformance.md"), toMarkdown());
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }
}
