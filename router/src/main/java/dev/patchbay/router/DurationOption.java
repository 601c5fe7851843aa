package dev.patchbay.router;

import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine;

/**
 * The one reading of a duration flag for every command ({@code route}, {@code simulate}): a number with a unit,
 * {@code ms}, {@code s}, {@code m} or {@code h} ({@code 50ms}, {@code 2s}, {@code 1.5m}, {@code 1h}). A bare number
 * is refused, since it meant milliseconds in one command and seconds in another.
 */
public final class DurationOption implements CommandLine.ITypeConverter<Duration> {
    private static final String EXAMPLES = "use a unit: e.g. 50ms, 2s, 1m or 1h";

    @Override
    public Duration convert(String value) {
        try {
            return parse(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }

    /** The duration {@code text} names; IllegalArgumentException, saying what is accepted, for anything else. */
    public static Duration parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long unitNanos;
        int suffix;
        if (t.endsWith("ms")) {
            unitNanos = 1_000_000L;
            suffix = 2;
        } else if (t.endsWith("s")) {
            unitNanos = 1_000_000_000L;
            suffix = 1;
        } else if (t.endsWith("m")) {
            unitNanos = 60_000_000_000L;
            suffix = 1;
        } else if (t.endsWith("h")) {
            unitNanos = 3_600_000_000_000L;
            suffix = 1;
        } else {
            throw new IllegalArgumentException(
                    t.matches("[0-9.]+")
                            ? "'" + text + "' has no unit; " + EXAMPLES
                            : "not a duration: '" + text + "'; " + EXAMPLES);
        }
        String number = t.substring(0, t.length() - suffix).trim();
        double amount;
        try {
            amount = Double.parseDouble(number);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a duration: '" + text + "'; " + EXAMPLES);
        }
        if (!(amount >= 0) || Double.isInfinite(amount) || !number.matches("[0-9]*\\.?[0-9]+|[0-9]+\\.")) {
            throw new IllegalArgumentException("not a duration: '" + text + "' (it must be 0 or more); " + EXAMPLES);
        }
        return Duration.ofNanos(Math.round(amount * unitNanos));
    }

    /** The shortest exact form {@link #parse} reads back: 10m, 30s, 500ms (else nanoseconds as ms with decimals). */
    public static String format(Duration d) {
        long nanos = d.toNanos();
        if (nanos % 3_600_000_000_000L == 0 && nanos > 0) return nanos / 3_600_000_000_000L + "h";
        if (nanos % 60_000_000_000L == 0 && nanos > 0) return nanos / 60_000_000_000L + "m";
        if (nanos % 1_000_000_000L == 0) return nanos / 1_000_000_000L + "s";
        if (nanos % 1_000_000L == 0) return nanos / 1_000_000L + "ms";
        return (nanos / 1e6) + "ms";
    }
}
