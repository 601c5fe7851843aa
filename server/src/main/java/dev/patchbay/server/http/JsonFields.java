package dev.patchbay.server.http;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Reads request fields with the JSON type the API declares for them. Null or absent is "not given"; any other
 * type is a 400 naming the field, never a silent conversion ({@code "stream": "yes"}, {@code "lora_name": 5}).
 */
public final class JsonFields {
    private JsonFields() {}

    public static String string(JsonNode value, String name) {
        if (absent(value)) return null;
        if (!value.isTextual()) throw wrongType(name, "a string", value);
        return value.asText();
    }

    public static Boolean bool(JsonNode value, String name) {
        if (absent(value)) return null;
        if (!value.isBoolean()) throw wrongType(name, "a boolean", value);
        return value.booleanValue();
    }

    public static boolean bool(JsonNode value, String name, boolean dflt) {
        Boolean b = bool(value, name);
        return b == null ? dflt : b;
    }

    public static Integer integer(JsonNode value, String name) {
        if (absent(value)) return null;
        if (!value.isIntegralNumber()) throw wrongType(name, "an integer", value);
        if (!value.canConvertToInt()) throw ApiException.badRequest(name + " is out of range, got " + value, name);
        return value.intValue();
    }

    public static Long longInteger(JsonNode value, String name) {
        if (absent(value)) return null;
        if (!value.isIntegralNumber()) throw wrongType(name, "an integer", value);
        if (!value.canConvertToLong()) throw ApiException.badRequest(name + " is out of range, got " + value, name);
        return value.longValue();
    }

    public static Double number(JsonNode value, String name) {
        if (absent(value)) return null;
        if (!value.isNumber()) throw wrongType(name, "a number", value);
        return value.doubleValue();
    }

    /** An object field (such as {@code stream_options}); null when absent. */
    public static JsonNode object(JsonNode value, String name) {
        if (absent(value)) return null;
        if (!value.isObject()) throw wrongType(name, "an object", value);
        return value;
    }

    /** A list field; null when absent. */
    public static JsonNode list(JsonNode value, String name) {
        if (absent(value)) return null;
        if (!value.isArray()) throw wrongType(name, "a list", value);
        return value;
    }

    private static boolean absent(JsonNode value) {
        return value == null || value.isNull() || value.isMissingNode();
    }

    public static ApiException wrongType(String name, String expected, JsonNode value) {
        return ApiException.badRequest(name + " must be " + expected + ", got " + kind(value), name);
    }

    /** The JSON type of {@code value} in words; the value itself is not echoed. */
    static String kind(JsonNode value) {
        if (value.isTextual()) return "a string";
        if (value.isBoolean()) return "a boolean";
        if (value.isIntegralNumber()) return "an integer";
        if (value.isNumber()) return "a number";
        if (value.isArray()) return "a list";
        if (value.isObject()) return "an object";
        return "null";
    }
}
