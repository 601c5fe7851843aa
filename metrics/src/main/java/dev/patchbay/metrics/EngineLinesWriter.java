package dev.patchbay.metrics;

import dev.patchbay.engine.stats.EngineSnapshot;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Writes the engine-wide families ({@link EngineFamily}) in the Prometheus text format 0.0.4: a family's header
 * rendered once, and for each sample the text up to its value reused while its label values stay the same, so a
 * scrape formats only the numbers.
 *
 * <p>The bytes equal what client_java's {@code PrometheusTextFormatWriter} writes for the collector's snapshot of
 * the same family (the tests compare both): label names sorted, samples sorted by their label values in label-name
 * order, and the rest as {@link TextFormat} renders it.
 */
final class EngineLinesWriter {

    /** Label sets remembered per family; only the legacy gauge's adapter lists vary, and it is cleared past this. */
    private static final int MAX_PREFIXES_PER_FAMILY = 64;

    private final Map<EngineFamily, Layout> layouts = new EnumMap<>(EngineFamily.class);

    EngineLinesWriter(String model, String engine) {
        for (EngineFamily family : EngineFamily.values()) layouts.put(family, new Layout(family, model, engine));
    }

    /** The family's lines for one snapshot; nothing when it has no samples, as the library writes nothing then. */
    void write(PageBuffer out, EngineFamily family, EngineSnapshot snapshot, List<AdapterRow> rows) {
        Layout layout = layouts.get(family);
        List<Sample> samples = new ArrayList<>(2);
        family.read(snapshot, rows, (value, labelValues) -> samples.add(new Sample(labelValues, value)));
        if (samples.isEmpty()) return;
        if (samples.size() > 1) samples.sort(layout.order);
        out.add(layout.header);
        for (Sample sample : samples) {
            out.add(layout.prefix(sample.labelValues));
            out.add((TextFormat.formatValue(sample.value) + "\n").getBytes(StandardCharsets.US_ASCII));
        }
    }

    private record Sample(String[] labelValues, double value) {}

    /** One family's header, label order and rendered sample prefixes. */
    private static final class Layout {
        final byte[] header;
        final Comparator<Sample> order;
        private final String sampleName;
        /** Label names in the order the text format writes them. */
        private final String[] names;
        /**
         * Where each written label's value comes from: -1 the model name, -2 the engine, else the index among the
         * family's declared label values.
         */
        private final int[] sources;

        private final String model;
        private final String engine;
        private final Map<List<String>, byte[]> prefixes = new ConcurrentHashMap<>();

        Layout(EngineFamily family, String model, String engine) {
            this.sampleName = family.type.sampleName(family.metricName);
            this.header = TextFormat.header(sampleName, family.type, family.fullHelp());
            this.model = model;
            this.engine = engine;
            List<String[]> labels = new ArrayList<>();
            if (family.hasBaseLabels()) {
                labels.add(new String[] {"model_name", "-1"});
                labels.add(new String[] {"engine", "-2"});
            }
            for (int i = 0; i < family.labels.size(); i++)
                labels.add(new String[] {family.labels.get(i), Integer.toString(i)});
            labels.sort(Comparator.comparing((String[] label) -> label[0]));
            names = labels.stream().map(label -> label[0]).toArray(String[]::new);
            sources = labels.stream()
                    .mapToInt(label -> Integer.parseInt(label[1]))
                    .toArray();
            order = (a, b) -> {
                for (int source : sources) {
                    if (source < 0) continue; // the same on every sample
                    int c = a.labelValues[source].compareTo(b.labelValues[source]);
                    if (c != 0) return c;
                }
                return 0;
            };
        }

        byte[] prefix(String[] labelValues) {
            List<String> key = Arrays.asList(labelValues);
            byte[] cached = prefixes.get(key);
            if (cached != null) return cached;
            if (prefixes.size() >= MAX_PREFIXES_PER_FAMILY) prefixes.clear();
            byte[] rendered = render(labelValues);
            prefixes.put(List.of(labelValues), rendered);
            return rendered;
        }

        private byte[] render(String[] labelValues) {
            StringBuilder text = new StringBuilder(96).append(sampleName);
            if (names.length > 0) {
                text.append('{');
                for (int i = 0; i < names.length; i++) {
                    if (i > 0) text.append(',');
                    String value = sources[i] == -1 ? model : sources[i] == -2 ? engine : labelValues[sources[i]];
                    text.append(names[i]).append("=\"");
                    TextFormat.escapeLabelValue(text, value);
                    text.append('"');
                }
                text.append('}');
            }
            return text.append(' ').toString().getBytes(StandardCharsets.UTF_8);
        }
    }
}
