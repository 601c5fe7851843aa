package dev.patchbay.launcher.load;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one inference-perf run measured, read from its report directory.
 *
 * <ul>
 *   <li>{@value #PER_REQUEST}: a JSON array, one entry per request sent: {@code start_time} (seconds on
 *       inference-perf's monotonic clock), {@code error} (null or an object), {@code info.lora_adapter} (null for the
 *       base model) and, for a successful request, {@code computed_metrics.time_to_first_token} in seconds;
 *   <li>{@value #SUMMARY}: {@code benchmark_time_seconds} and {@code successes.throughput.requests_per_sec}.
 * </ul>
 *
 * <p>TTFT percentiles are computed from the per-request times by nearest rank, as {@link AiperfReport}'s are, so the
 * two tools' figures compare; inference-perf's own summary interpolates between ranks.
 *
 * @param version            inference-perf's version, as the caller knows it (its reports do not say which)
 * @param planned            requests inference-perf planned for the stage ({@link InferencePerfRun#plannedRequests})
 * @param requests           requests sent and ended, successful or failed
 * @param errors             of those, the failed ones
 * @param benchmarkSeconds   inference-perf's benchmark time
 * @param requestThroughput  its successful requests per second
 * @param sentRate           (n - 1) over the first to the last send; NaN under two requests
 * @param ttft               time to first token of the successful requests, ms
 * @param models             per model (adapter, or the base model), by name
 * @param ttftMsByModel      every successful request's TTFT in ms, per model (not written out)
 */
public record InferencePerfReport(
        String version,
        int planned,
        int requests,
        int errors,
        double benchmarkSeconds,
        double requestThroughput,
        double sentRate,
        Ttft ttft,
        Map<String, ModelFigures> models,
        @JsonIgnore Map<String, List<Double>> ttftMsByModel)
        implements LoadReport {

    public static final String SUMMARY = "summary_lifecycle_metrics.json";
    public static final String PER_REQUEST = "per_request_lifecycle_metrics.json";

    private static final ObjectMapper JSON = new ObjectMapper();

    public InferencePerfReport {
        models = Collections.unmodifiableMap(new TreeMap<>(models));
    }

    /** Reads a run of {@code run}'s settings from its artifact directory. */
    public static InferencePerfReport read(InferencePerfRun run) throws IOException {
        return read(run.artifactDir(), run.plannedRequests(), run.baseModel(), InferencePerfRun.VERSION);
    }

    /**
     * @param planned   the requests the run planned
     * @param baseModel the name a request for no adapter is counted under
     */
    public static InferencePerfReport read(Path dir, int planned, String baseModel, String version) throws IOException {
        JsonNode summary = readJson(dir.resolve(SUMMARY));
        JsonNode perRequest = readJson(dir.resolve(PER_REQUEST));
        if (!perRequest.isArray()) {
            throw new IOException(dir.resolve(PER_REQUEST) + " is not a JSON array");
        }
        RequestTally tally = new RequestTally();
        for (JsonNode entry : perRequest) {
            JsonNode adapter = entry.path("info").path("lora_adapter");
            String model = adapter.isTextual() ? adapter.asText() : baseModel;
            JsonNode error = entry.get("error");
            boolean failed = error != null && !error.isNull();
            tally.request(model, Math.round(entry.path("start_time").asDouble(Double.NaN) * 1e9), failed);
            if (failed) continue;
            JsonNode ttft = entry.path("computed_metrics").path("time_to_first_token");
            if (!ttft.isNumber()) continue; // an answer of one chunk has no TTFT in inference-perf
            tally.ttft(model, ttft.asDouble() * 1000);
        }
        return new InferencePerfReport(
                version,
                planned,
                tally.requests(),
                tally.errors(),
                summary.path("benchmark_time_seconds").asDouble(Double.NaN),
                summary.path("successes")
                        .path("throughput")
                        .path("requests_per_sec")
                        .asDouble(Double.NaN),
                tally.sentRate(),
                tally.ttft(),
                tally.models(),
                tally.ttftsByModel());
    }

    /** Requests planned but never sent: inference-perf could not make their prompt, and reports nothing of them. */
    @Override
    public Integer unsent() {
        return Math.max(0, planned - requests);
    }

    @Override
    public String tool() {
        return "inference-perf " + version;
    }

    @Override
    public String summary() {
        StringBuilder s = new StringBuilder(String.format(
                Locale.ROOT,
                "inference-perf %s: %d requests (%d failed, %d planned but never sent) in %.2f s; sent at %.2f/s;"
                        + " %.2f requests/s; TTFT p50 %.1f p90 %.1f p99 %.1f ms%n",
                version,
                requests,
                errors,
                unsent(),
                benchmarkSeconds,
                sentRate,
                requestThroughput,
                ttft.p50(),
                ttft.p90(),
                ttft.p99()));
        models.forEach((name, f) -> s.append(String.format(
                Locale.ROOT,
                "  %s: %d requests (%d failed), TTFT p50 %.1f p99 %.1f ms%n",
                name,
                f.requests(),
                f.errors(),
                f.ttft().p50(),
                f.ttft().p99())));
        return s.toString();
    }

    private static JsonNode readJson(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException(
                    "no " + file.getFileName() + " in " + file.getParent() + " (did inference-perf finish?)");
        }
        return JSON.readTree(file.toFile());
    }
}
