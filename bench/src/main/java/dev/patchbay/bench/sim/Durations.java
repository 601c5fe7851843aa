package dev.patchbay.bench.sim;

/** Parses {@code 500ms}, {@code 30s}, {@code 10m}, {@code 1h} (a bare number is seconds) into nanoseconds. */
final class Durations {
    private Durations() {}

    static long parseNanos(String text) {
        String t = text.trim().toLowerCase(java.util.Locale.ROOT);
        double unit = 1e9;
        String number = t;
        if (t.endsWith("ms")) {
            unit = 1e6;
            number = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            number = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            unit = 60e9;
            number = t.substring(0, t.length() - 1);
        } else if (t.endsWith("h")) {
            unit = 3600e9;
            number = t.substring(0, t.length() - 1);
        }
        try {
            double v = Double.parseDouble(number);
            if (!(v >= 0) || Double.isInfinite(v)) throw new NumberFormatException();
            return Math.round(v * unit);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a duration: '" + text + "' (use e.g. 500ms, 30s, 10m, 1h)");
        }
    }
}
