package dev.patchbay.router.prom;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Parser for the Prometheus text exposition format 0.0.4.
 *
 * <p>Every line is checked, so a malformed page is rejected as a whole even when the broken line
 * belongs to a family the caller does not keep; only the kept samples are materialised, which
 * keeps the cost low on a full vLLM page that ignores the scrape's name filter.
 */
public final class PrometheusTextParser {
    private static final Set<String> TYPES = Set.of(
            "counter",
            "gauge",
            "histogram",
            "summary",
            "untyped",
            // OpenMetrics types, tolerated so that a server answering in that dialect still parses
            "unknown",
            "info",
            "stateset",
            "gaugehistogram");

    private final Predicate<String> keep;

    /** A parser that keeps samples whose name passes {@code keep}. */
    public PrometheusTextParser(Predicate<String> keep) {
        this.keep = keep;
    }

    /** A parser that keeps every sample. */
    public PrometheusTextParser() {
        this(name -> true);
    }

    public MetricsPage parse(String page) throws MalformedPageException {
        Map<String, List<Sample>> samples = new HashMap<>();
        Map<String, String> types = new HashMap<>();
        Map<String, String> helps = new HashMap<>();
        int lineNumber = 0;
        int start = 0;
        int length = page.length();
        while (start < length) {
            int end = page.indexOf('\n', start);
            if (end < 0) {
                end = length;
            }
            lineNumber++;
            int lineEnd = end > start && page.charAt(end - 1) == '\r' ? end - 1 : end;
            new Line(page, start, lineEnd, lineNumber).parseInto(samples, types, helps);
            start = end + 1;
        }
        return new MetricsPage(samples, types, helps);
    }

    /** A cursor over one line. */
    private final class Line {
        private final String text;
        private final int end;
        private final int number;
        private int pos;

        Line(String text, int start, int end, int number) {
            this.text = text;
            this.pos = start;
            this.end = end;
            this.number = number;
        }

        void parseInto(Map<String, List<Sample>> samples, Map<String, String> types, Map<String, String> helps)
                throws MalformedPageException {
            skipBlanks();
            if (pos >= end) {
                return;
            }
            if (text.charAt(pos) == '#') {
                pos++;
                parseComment(types, helps);
                return;
            }
            parseSample(samples);
        }

        private void parseComment(Map<String, String> types, Map<String, String> helps) throws MalformedPageException {
            skipBlanks();
            String keyword = token();
            if (!keyword.equals("HELP") && !keyword.equals("TYPE")) {
                return;
            }
            skipBlanks();
            String name = metricName();
            if (keyword.equals("TYPE")) {
                requireBlank();
                skipBlanks();
                String type = token();
                skipBlanks();
                if (pos < end || !TYPES.contains(type)) {
                    throw error("bad TYPE line for " + name);
                }
                if (types.put(name, type) != null) {
                    throw error("second TYPE line for " + name);
                }
            } else {
                if (pos < end) {
                    requireBlank();
                    skipBlanks();
                }
                helps.put(name, unescapeHelp(text.substring(pos, end)));
            }
        }

        private void parseSample(Map<String, List<Sample>> samples) throws MalformedPageException {
            String name = metricName();
            boolean kept = keep.test(name);
            skipBlanks();
            Map<String, String> labels = Map.of();
            if (pos < end && text.charAt(pos) == '{') {
                pos++;
                labels = labels(kept);
                skipBlanks();
            }
            if (pos >= end) {
                throw error("sample " + name + " has no value");
            }
            double value = value(token());
            Long timestamp = null;
            if (pos < end) {
                requireBlank();
                skipBlanks();
                if (pos < end) {
                    timestamp = timestamp(token());
                    skipBlanks();
                }
            }
            if (pos < end) {
                throw error("unexpected text after sample " + name);
            }
            if (kept) {
                samples.computeIfAbsent(name, n -> new ArrayList<>()).add(new Sample(name, labels, value, timestamp));
            }
        }

        private Map<String, String> labels(boolean kept) throws MalformedPageException {
            Map<String, String> labels = new HashMap<>();
            skipBlanks();
            while (pos < end && text.charAt(pos) != '}') {
                String labelName = labelName();
                skipBlanks();
                expect('=');
                skipBlanks();
                expect('"');
                String labelValue = labelValue();
                if (labels.put(labelName, kept ? labelValue : "") != null) {
                    throw error("label " + labelName + " given twice");
                }
                skipBlanks();
                if (pos < end && text.charAt(pos) == ',') {
                    pos++;
                    skipBlanks();
                } else if (pos >= end || text.charAt(pos) != '}') {
                    throw error("expected ',' or '}' in label set");
                }
            }
            expect('}');
            return labels;
        }

        private String labelValue() throws MalformedPageException {
            StringBuilder value = null;
            int runStart = pos;
            while (pos < end) {
                char c = text.charAt(pos);
                if (c == '"') {
                    String result = value == null
                            ? text.substring(runStart, pos)
                            : value.append(text, runStart, pos).toString();
                    pos++;
                    return result;
                }
                if (c == '\\') {
                    if (value == null) {
                        value = new StringBuilder();
                    }
                    value.append(text, runStart, pos);
                    if (pos + 1 >= end) {
                        throw error("escape at end of line");
                    }
                    char escaped = text.charAt(pos + 1);
                    switch (escaped) {
                        case '\\' -> value.append('\\');
                        case '"' -> value.append('"');
                        case 'n' -> value.append('\n');
                        default -> throw error("invalid escape \\" + escaped + " in label value");
                    }
                    pos += 2;
                    runStart = pos;
                } else {
                    pos++;
                }
            }
            throw error("unterminated label value");
        }

        private String metricName() throws MalformedPageException {
            int start = pos;
            if (pos < end && isNameStart(text.charAt(pos), true)) {
                pos++;
                while (pos < end && isNamePart(text.charAt(pos), true)) {
                    pos++;
                }
            }
            if (pos == start) {
                throw error("expected a metric name");
            }
            return text.substring(start, pos);
        }

        private String labelName() throws MalformedPageException {
            int start = pos;
            if (pos < end && isNameStart(text.charAt(pos), false)) {
                pos++;
                while (pos < end && isNamePart(text.charAt(pos), false)) {
                    pos++;
                }
            }
            if (pos == start) {
                throw error("expected a label name");
            }
            return text.substring(start, pos);
        }

        private double value(String token) throws MalformedPageException {
            switch (token.toLowerCase(Locale.ROOT)) {
                case "nan" -> {
                    return Double.NaN;
                }
                case "+inf", "inf" -> {
                    return Double.POSITIVE_INFINITY;
                }
                case "-inf" -> {
                    return Double.NEGATIVE_INFINITY;
                }
                default -> {
                    // Double.parseDouble also takes "1d", "0x1p3" and "Infinity"; the format does not
                    for (int i = 0; i < token.length(); i++) {
                        char c = token.charAt(i);
                        if (!(c >= '0' && c <= '9') && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') {
                            throw error("bad value " + token);
                        }
                    }
                    try {
                        return Double.parseDouble(token);
                    } catch (NumberFormatException e) {
                        throw error("bad value " + token);
                    }
                }
            }
        }

        private Long timestamp(String token) throws MalformedPageException {
            try {
                return Long.parseLong(token);
            } catch (NumberFormatException e) {
                throw error("bad timestamp " + token);
            }
        }

        private String token() {
            int start = pos;
            while (pos < end && !isBlank(text.charAt(pos))) {
                pos++;
            }
            return text.substring(start, pos);
        }

        private void expect(char c) throws MalformedPageException {
            if (pos >= end || text.charAt(pos) != c) {
                throw error("expected '" + c + "'");
            }
            pos++;
        }

        private void requireBlank() throws MalformedPageException {
            if (pos < end && !isBlank(text.charAt(pos))) {
                throw error("expected a blank at column " + pos);
            }
        }

        private void skipBlanks() {
            while (pos < end && isBlank(text.charAt(pos))) {
                pos++;
            }
        }

        private MalformedPageException error(String problem) {
            return new MalformedPageException(number, problem);
        }
    }

    private static String unescapeHelp(String help) {
        if (help.indexOf('\\') < 0) {
            return help;
        }
        StringBuilder out = new StringBuilder(help.length());
        for (int i = 0; i < help.length(); i++) {
            char c = help.charAt(i);
            if (c == '\\' && i + 1 < help.length()) {
                char next = help.charAt(i + 1);
                if (next == '\\' || next == 'n') {
                    out.append(next == 'n' ? '\n' : '\\');
                    i++;
                    continue;
                }
            }
            out.append(c);
        }
        return out.toString();
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t';
    }

    private static boolean isNameStart(char c, boolean colonAllowed) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colonAllowed && c == ':');
    }

    private static boolean isNamePart(char c, boolean colonAllowed) {
        return isNameStart(c, colonAllowed) || (c >= '0' && c <= '9');
    }
}
