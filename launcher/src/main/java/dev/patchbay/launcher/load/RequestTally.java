package dev.patchbay.launcher.load;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A run's requests as a load tool's per-request records give them, counted the same way for every tool: per model,
 * the failed ones, each success's TTFT, and when each was sent.
 */
final class RequestTally {
    private final List<Double> ttfts = new ArrayList<>();
    private final Map<String, List<Double>> ttftsByModel = new HashMap<>();
    private final Map<String, int[]> countsByModel = new HashMap<>(); // {requests, errors}
    private int requests, errors;
    private long firstSentNanos = Long.MAX_VALUE, lastSentNanos = Long.MIN_VALUE;

    /** A request for {@code model}, sent at {@code sentNanos} on the tool's clock; failed or not. */
    void request(String model, long sentNanos, boolean failed) {
        requests++;
        int[] counts = countsByModel.computeIfAbsent(model, m -> new int[2]);
        counts[0]++;
        firstSentNanos = Math.min(firstSentNanos, sentNanos);
        lastSentNanos = Math.max(lastSentNanos, sentNanos);
        if (failed) {
            errors++;
            counts[1]++;
        }
    }

    /** A successful request's time to first token. */
    void ttft(String model, double millis) {
        ttfts.add(millis);
        ttftsByModel.computeIfAbsent(model, m -> new ArrayList<>()).add(millis);
    }

    int requests() {
        return requests;
    }

    int errors() {
        return errors;
    }

    /** (n - 1) over the time from the first send to the last; NaN under two requests. */
    double sentRate() {
        return requests < 2 ? Double.NaN : (requests - 1) / ((lastSentNanos - firstSentNanos) / 1e9);
    }

    Ttft ttft() {
        return Ttft.of(ttfts);
    }

    Map<String, ModelFigures> models() {
        Map<String, ModelFigures> models = new TreeMap<>();
        countsByModel.forEach((model, counts) -> models.put(
                model, new ModelFigures(counts[0], counts[1], Ttft.of(ttftsByModel.getOrDefault(model, List.of())))));
        return models;
    }

    Map<String, List<Double>> ttftsByModel() {
        return Map.copyOf(ttftsByModel);
    }
}
