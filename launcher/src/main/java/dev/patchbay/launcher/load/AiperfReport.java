package dev.patchbay.launcher.load;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one aiperf run measured, read from its artifact directory.
 *
 * <ul>
 *   <li>{@value #SUMMARY}: the aiperf version, its benchmark duration, request throughput (successful requests over
 *       the benchmark duration), output token throughput and its own TTFT percentiles;
 *   <li>{@value #RECORDS}: one JSON line per request, of the warm-up and the measured phase
 *       ({@code metadata.benchmark_phase} {@code warmup} or {@code profiling}); of the measured phase's lines: a
 *       failed request has an {@code error} object ({@code code}, {@code type}, {@code message}) and no TTFT; a
 *       successful one has {@code metrics.time_to_first_token.value} (unit {@code ms}); {@code
 *       metadata.credit_issued_ns} is when aiperf's timer released the request;
 *   <li>{@value #INPUTS}: every request aiperf made up front ({@code data[].session_id}, {@code
 *       data[].payloads[turn].model}): a record's model is the payload its {@code metadata.conversation_id} and
 *       {@code metadata.turn_index} name, as aiperf documents for that pair.
 * </ul>
 *
 * <p>TTFT percentiles here, overall and per model, are computed the same way from the records: nearest rank on the
 * sorted sample (as the fleet simulator's reports do), over the measured phase's successful requests. aiperf's own
 * percentiles ({@link #aiperfTtft}) interpolate between ranks, so they differ a little on small samples.
 *
 * @param aiperfVersion         the version aiperf wrote into its summary
 * @param requests              requests of the measured phase that ended, successful or failed
 * @param errors                of those, the failed ones
 * @param warmupRequests        warm-up requests (sent to the server too, left out of every other figure)
 * @param benchmarkSeconds      aiperf's benchmark duration: the measured phase from its first request to its last
 *                              answer
 * @param requestThroughput     aiperf's request throughput: successful requests over the benchmark duration
 * @param sentRate              the rate the measured phase's requests were released at: (n - 1) over the time from
 *                              the first release to the last, from {@code credit_issued_ns}; NaN under two requests
 * @param outputTokenThroughput aiperf's output tokens per second over the benchmark duration
 * @param ttft                  time to first token of the successful requests, ms
 * @param aiperfTtft            aiperf's own TTFT percentiles, for comparison
 * @param models                per model (adapter), by name
 * @param ttftMsByModel         every successful request's time to first token in ms, per model (not written out)
 */
public record AiperfReport(
        String aiperfVersion,
        int requests,
        int errors,
        int warmupRequests,
        double benchmarkSeconds,
        double requestThroughput,
        double sentRate,
        double outputTokenThroughput,
        Ttft ttft,
        Ttft aiperfTtft,
        Map<String, ModelFigures> models,
        @JsonIgnore Map<String, List<Double>> ttftMsByModel)
        implements LoadReport {

    public static final String SUMMARY = "profile_export_aiperf.json";
    public static final String RECORDS = "profile_export.jsonl";
    public static final String INPUTS = "inputs.json";

    private static final ObjectMapper JSON = new ObjectMapper();

    public AiperfReport {
        models = java.util.Collections.unmodifiableMap(new TreeMap<>(models));
    }

    /** Reads the three files of an aiperf artifact directory. */
    public static AiperfReport read(Path artifactDir) throws IOException {
        JsonNode summary = readJson(artifactDir.resolve(SUMMARY));
        Map<String, String> modelOf = modelsByTurn(readJson(artifactDir.resolve(INPUTS)));

        RequestTally tally = new RequestTally();
        int warmup = 0;

        Path recordsFile = artifactDir.resolve(RECORDS);
        try (BufferedReader in = Files.newBufferedReader(recordsFile, StandardCharsets.UTF_8)) {
            int lineNumber = 0;
            for (String line; (line = in.readLine()) != null; ) {
                lineNumber++;
                if (line.isBlank()) continue;
                JsonNode record = JSON.readTree(line);
                JsonNode meta = record.path("metadata");
                String phase = meta.path("benchmark_phase").asText();
                if (phase.equals("warmup")) {
                    warmup++;
                    continue;
                }
                if (!phase.equals("profiling")) {
                    throw new IOException(recordsFile + ":" + lineNumber + ": unknown benchmark_phase '" + phase + "'");
                }
                String key = turnKey(
                        meta.path("conversation_id").asText(),
                        meta.path("turn_index").asInt());
                String model = modelOf.get(key);
                if (model == null) {
                    throw new IOException(
                            recordsFile + ":" + lineNumber + ": conversation " + key + " is not in " + INPUTS);
                }
                JsonNode error = record.get("error");
                boolean failed = error != null && !error.isNull();
                tally.request(model, meta.path("credit_issued_ns").asLong(), failed);
                if (failed) continue;
                JsonNode ttft = record.path("metrics").path("time_to_first_token");
                if (ttft.isMissingNode()) continue; // not streamed: no TTFT
                if (!ttft.path("unit").asText().equals("ms")) {
                    throw new IOException(recordsFile + ":" + lineNumber + ": time_to_first_token in '"
                            + ttft.path("unit").asText() + "', not ms");
                }
                tally.ttft(model, ttft.path("value").asDouble());
            }
        }

        JsonNode aiperfTtft = summary.path("time_to_first_token");
        return new AiperfReport(
                summary.path("aiperf_version").asText(),
                tally.requests(),
                tally.errors(),
                warmup,
                avg(summary, "benchmark_duration"),
                avg(summary, "request_throughput"),
                tally.sentRate(),
                avg(summary, "output_token_throughput"),
                tally.ttft(),
                new Ttft(
                        aiperfTtft.path("count").asInt(),
                        number(aiperfTtft, "p50"),
                        number(aiperfTtft, "p90"),
                        number(aiperfTtft, "p99")),
                tally.models(),
                tally.ttftsByModel());
    }

    @Override
    public String tool() {
        return "aiperf " + aiperfVersion;
    }

    private static JsonNode readJson(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException("no " + file.getFileName() + " in " + file.getParent() + " (did aiperf finish?)");
        }
        return JSON.readTree(file.toFile());
    }

    /** conversation and turn -> model, from inputs.json. */
    private static Map<String, String> modelsByTurn(JsonNode inputs) {
        Map<String, String> modelOf = new HashMap<>();
        for (JsonNode conversation : inputs.path("data")) {
            String session = conversation.path("session_id").asText();
            JsonNode payloads = conversation.path("payloads");
            for (int turn = 0; turn < payloads.size(); turn++) {
                modelOf.put(
                        turnKey(session, turn), payloads.get(turn).path("model").asText());
            }
        }
        return modelOf;
    }

    private static String turnKey(String conversation, int turn) {
        return conversation + "#" + turn;
    }

    private static double avg(JsonNode summary, String metric) {
        return number(summary.path(metric), "avg");
    }

    private static double number(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || !value.isNumber() ? Double.NaN : value.asDouble();
    }

    /** The report as a few lines of text: the overall figures, then one line per model. */
    @Override
    public String summary() {
        StringBuilder s = new StringBuilder();
        s.append(String.format(
                "aiperf %s: %d requests (%d failed, %d warm-up) in %.2f s; sent at %.2f/s; %.2f requests/s,"
                        + " %.1f output tokens/s; TTFT p50 %.1f p90 %.1f p99 %.1f ms (aiperf: %.1f / %.1f / %.1f)%n",
                aiperfVersion,
                requests,
                errors,
                warmupRequests,
                benchmarkSeconds,
                sentRate,
                requestThroughput,
                outputTokenThroughput,
                ttft.p50(),
                ttft.p90(),
                ttft.p99(),
                aiperfTtft.p50(),
                aiperfTtft.p90(),
                aiperfTtft.p99()));
        models.forEach((name, f) -> s.append(String.format(
                "  %s: %d requests (%d failed), TTFT p50 %.1f p99 %.1f ms%n",
                name, f.requests(), f.errors(), f.ttft().p50(), f.ttft().p99())));
        return s.toString();
    }
}
