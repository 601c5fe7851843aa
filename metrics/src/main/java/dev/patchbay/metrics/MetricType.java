package dev.patchbay.metrics;

/** The Prometheus type of a family read from snapshots. Counters are exposed with {@code _total} appended. */
enum MetricType {
    GAUGE,
    COUNTER;

    /** The name a family's samples carry in the text format. */
    String sampleName(String metricName) {
        return this == COUNTER ? metricName + "_total" : metricName;
    }

    /** The type as the text format's {@code # TYPE} line names it. */
    String textName() {
        return this == COUNTER ? "counter" : "gauge";
    }
}
