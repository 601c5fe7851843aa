package dev.patchbay.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A parsed Prometheus text page, enough for the tests' invariants (labels without escapes). */
record PromPage(List<Sample> samples) {
    record Sample(String name, Map<String, String> labels, double value) {}

    private static final Pattern LINE =
            Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)(?:\\s+\\S+)?$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    static PromPage parse(String text) {
        List<Sample> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) continue;
            Matcher m = LINE.matcher(line);
            if (!m.matches()) throw new IllegalArgumentException("bad line: " + line);
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) labels.put(l.group(1), l.group(2));
            }
            out.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
        }
        return new PromPage(out);
    }

    List<Sample> all(String name) {
        return samples.stream().filter(s -> s.name.equals(name)).toList();
    }

    double value(String name) {
        List<Sample> s = all(name);
        if (s.size() != 1) throw new IllegalArgumentException(name + " has " + s.size() + " samples");
        return s.get(0).value;
    }

    /** lora_name -> value for a per-adapter family. */
    Map<String, Double> perAdapter(String name) {
        Map<String, Double> m = new LinkedHashMap<>();
        for (Sample s : all(name)) m.put(s.labels.get("lora_name"), s.value);
        return m;
    }
}
