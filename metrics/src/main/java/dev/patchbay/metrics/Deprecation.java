package dev.patchbay.metrics;

/**
 * vLLM's lifecycle for a deprecated metric: deprecated in X.Y (still shown, its help says so), hidden in X.Y+1
 * unless {@code --show-hidden-metrics-for-version=X.Y}, removed from X.Y+2 on.
 *
 * @param since       the version that deprecated the metric, {@code X.Y}
 * @param replacement what readers should use instead
 */
public record Deprecation(String since, String replacement) {

    public Deprecation {
        Version.parse(since);
    }

    public enum Status {
        SHOWN,
        HIDDEN,
        REMOVED
    }

    public Status status(String runningVersion, String showHiddenMetricsForVersion) {
        Version deprecated = Version.parse(since);
        int distance = Version.parse(runningVersion).minorsSince(deprecated);
        if (distance <= 0) return Status.SHOWN;
        if (distance == 1) {
            boolean asked = showHiddenMetricsForVersion != null
                    && Version.parse(showHiddenMetricsForVersion).equals(deprecated);
            return asked ? Status.SHOWN : Status.HIDDEN;
        }
        return Status.REMOVED;
    }

    public boolean shown(String runningVersion, String showHiddenMetricsForVersion) {
        return status(runningVersion, showHiddenMetricsForVersion) == Status.SHOWN;
    }

    /** The help text of the deprecated metric, ending with vLLM's notice. */
    public String help(String help) {
        return help + " DEPRECATED: use " + replacement + " instead.";
    }
}
