package dev.patchbay.router.pick.profile;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.router.DurationOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A plugin's {@code parameters} object, read one typed value at a time. Every problem is an
 * IllegalArgumentException naming the parameter and the value found; {@link ProfileFile} adds the file, the profile
 * and the plugin.
 */
public final class PluginParameters {
    /** No parameters given: every value takes its default. */
    public static final PluginParameters NONE = new PluginParameters(null);

    private final JsonNode object;

    /** {@code object} is the JSON object of a plugin's parameters, or null when it has none. */
    PluginParameters(JsonNode object) {
        if (object != null && !object.isNull() && !object.isObject()) {
            throw new IllegalArgumentException("parameters must be an object, got " + show(object));
        }
        this.object = object == null || object.isNull() ? null : object;
    }

    /** Fails on a parameter the type does not take: a misspelt one would otherwise be silently left at its default. */
    void onlyThese(List<String> known) {
        if (object == null) {
            return;
        }
        List<String> names = new ArrayList<>();
        object.fieldNames().forEachRemaining(names::add);
        for (String name : names) {
            if (!known.contains(name)) {
                throw new IllegalArgumentException("unknown parameter '" + name + "'; "
                        + (known.isEmpty() ? "this type takes none" : "known: " + String.join(", ", known)));
            }
        }
    }

    /** An integer of at least {@code min}; a number with a fraction, a string or anything else is an error. */
    public int integer(String name, int fallback, int min) {
        JsonNode value = value(name);
        if (value == null) {
            return fallback;
        }
        if (!value.isIntegralNumber() || !value.canConvertToInt() || value.intValue() < min) {
            throw new IllegalArgumentException(
                    "parameter '" + name + "' must be an integer >= " + min + ", got " + show(value));
        }
        return value.intValue();
    }

    /** true or false; anything else (a string "true", a number) is an error. */
    public boolean bool(String name, boolean fallback) {
        JsonNode value = value(name);
        if (value == null) {
            return fallback;
        }
        if (!value.isBoolean()) {
            throw new IllegalArgumentException("parameter '" + name + "' must be true or false, got " + show(value));
        }
        return value.booleanValue();
    }

    /** A finite number in [min, max]. */
    public double number(String name, double fallback, double min, double max) {
        JsonNode value = value(name);
        if (value == null) {
            return fallback;
        }
        if (!value.isNumber() || !(value.doubleValue() >= min && value.doubleValue() <= max)) {
            throw new IllegalArgumentException(
                    "parameter '" + name + "' must be a number in [" + min + ", " + max + "], got " + show(value));
        }
        return value.doubleValue();
    }

    /** A finite number (NaN and the infinities are refused). */
    public double number(String name, double fallback) {
        JsonNode value = value(name);
        if (value == null) {
            return fallback;
        }
        if (!value.isNumber() || !Double.isFinite(value.doubleValue())) {
            throw new IllegalArgumentException("parameter '" + name + "' must be a finite number, got " + show(value));
        }
        return value.doubleValue();
    }

    /** A duration string with a unit, as on the command line ({@link DurationOption}: 500ms, 30s, 1m), at least min. */
    public Duration duration(String name, Duration fallback, Duration min) {
        JsonNode value = value(name);
        if (value == null) {
            return fallback;
        }
        Duration d;
        try {
            d = value.isTextual() ? DurationOption.parse(value.textValue()) : null;
        } catch (IllegalArgumentException e) {
            d = null;
        }
        if (d == null || d.compareTo(min) < 0) {
            throw new IllegalArgumentException(
                    "parameter '" + name + "' must be a duration with a unit (e.g. 30s) of at least "
                            + DurationOption.format(min) + ", got " + show(value));
        }
        return d;
    }

    /**
     * A value as written, for messages: numbers plainly (Jackson would quote NaN, making it look like the string
     * "NaN"), anything else as JSON.
     */
    static String show(JsonNode value) {
        return value.isNumber() ? value.asText() : value.toString();
    }

    private JsonNode value(String name) {
        return object == null ? null : object.get(name);
    }
}
