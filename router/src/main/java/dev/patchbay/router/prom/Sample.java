package dev.patchbay.router.prom;

import java.util.Map;

/**
 * One sample line of a Prometheus text page.
 *
 * @param name        the sample's metric name (for histograms this includes _bucket, _sum, ...)
 * @param labels      label names to unescaped values, in no particular order
 * @param value       the value; NaN and infinities are allowed
 * @param timestampMs the optional timestamp in milliseconds, or null when the line had none
 */
public record Sample(String name, Map<String, String> labels, double value, Long timestampMs) {
    public Sample {
        labels = Map.copyOf(labels);
    }

    /** The label's value, or "" when the label is absent (Prometheus treats both the same). */
    public String label(String labelName) {
        return labels.getOrDefault(labelName, "");
    }
}
