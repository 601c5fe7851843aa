package dev.patchbay.metrics;

/** The Prometheus type of a family read from snapshots. Counters are exposed with {@code _total} appended. */
enum MetricType {
    GAUGE, COUNTER;

    /** The type as the text format's {@code # TYPE} line names it. */
    String textName() {
        return this == COUNTER ? "counter" : "gauge";
    }
}
