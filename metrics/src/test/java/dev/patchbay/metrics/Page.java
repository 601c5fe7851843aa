package dev.patchbay.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A parsed Prometheus text page, for assertions. */
record Page(Map<String, String> types, Map<String, String> helps, List<Sample> samples) {

    record Sample(String name, Map<String, String> labels, double value) {
        String label(String name) {
            return labels.get(name);
        }
    }

    static Page parse(String text) {
        Map<String, String> types = new LinkedHashMap<>();
        Map<String, String> helps = new LinkedHashMap<>();
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty()) continue;
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.substring(7).split(" ");
                types.put(parts[0], parts[1]);
            } else if (line.startsWith("# HELP ")) {
                String rest = line.substring(7);
                int space = rest.indexOf(' ');
                helps.put(rest.substring(0, space), rest.substring(space + 1));
            } else if (!line.startsWith("#")) {
                samples.add(parseSample(line));
            }
        }
        return new Page(types, helps, samples);
    }

    private static Sample parseSample(String line) {
        int brace = line.indexOf('{');
        Map<String, String> labels = new LinkedHashMap<>();
        String name;
        int i;
        if (brace < 0 || brace > line.indexOf(' ')) {
            name = line.substring(0, line.indexOf(' '));
            i = line.indexOf(' ');
        } else {
            name = line.substring(0, brace);
            i = brace + 1;
            while (line.charAt(i) != '}') {
                int eq = line.indexOf('=', i);
                String label = line.substring(i, eq);
                StringBuilder value = new StringBuilder();
                int j = eq + 2;
                for (; line.charAt(j) != '"'; j++) {
                    char c = line.charAt(j);
                    if (c == '\\') {
                        char next = line.charAt(++j);
                        value.append(next == 'n' ? '\n' : next);
                    } else {
                        value.append(c);
                    }
                }
                labels.put(label, value.toString());
                i = j + 1;
                if (line.charAt(i) == ',') i++;
            }
            i++;
        }
        String value = line.substring(i).trim().split(" ")[0];
        double v = switch (value) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(value);
        };
        return new Sample(name, labels, v);
    }

    List<Sample> samples(String name) {
        return samples.stream().filter(s -> s.name().equals(name)).toList();
    }

    /** The one sample of {@code name} whose labels include all of {@code labels} (name/value pairs). */
    Optional<Sample> find(String name, String... labels) {
        return samples(name).stream()
                .filter(s -> {
                    for (int k = 0; k + 1 < labels.length; k += 2) {
                        if (!labels[k + 1].equals(s.labels().get(labels[k]))) return false;
                    }
                    return true;
                })
                .reduce((a, b) -> {
                    throw new AssertionError("more than one sample of " + name + " matches");
                });
    }

    double value(String name, String... labels) {
        return find(name, labels)
                .orElseThrow(() -> new AssertionError("no sample " + name + " " + List.of(labels)))
                .value();
    }

    /** Distinct values of a label across the samples of {@code name}, in page order. */
    List<String> labelValues(String name, String label) {
        return samples(name).stream().map(s -> s.label(label)).distinct().toList();
    }
}
