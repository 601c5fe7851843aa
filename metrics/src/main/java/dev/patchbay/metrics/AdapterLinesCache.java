package dev.patchbay.metrics;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Writes the per-adapter families in the Prometheus text format 0.0.4 from lines rendered once per adapter and
 * reused until that adapter's numbers change.
 *
 * <p>Lines are kept in chunks of neighbouring adapters, one block of bytes per family and label group, so a scrape
 * copies a few dozen blocks per family instead of touching every line: only the chunks holding a changed adapter
 * are assembled again, and only for the families a scrape asks for (a router's {@code name[]} scrape asks for three
 * of the seven, every 50 ms). Chunk boundaries follow the adapters' names (a chunk ends after a name whose hash has its
 * low bits clear), so an adapter that arrives or leaves disturbs only its own chunk.
 *
 * <p>The bytes equal what client_java's {@code PrometheusTextFormatWriter} writes for the same samples (the tests
 * compare both): samples sorted by label values in label-name order, label names sorted, and the rest as
 * {@link TextFormat} renders it.
 */
final class AdapterLinesCache {

    private static final int CHUNK_HASH_MASK = 15;
    private static final int MAX_CHUNK = 48;
    private static final int FAMILIES = AdapterFamily.values().length;

    private final String model;
    private final String engine;
    private final Map<AdapterFamily, byte[]> headers = new EnumMap<>(AdapterFamily.class);
    /** The rows and chunks of the latest scrape, in name order; replaced whole, so concurrent scrapes are safe. */
    private volatile State state = new State(new RowLines[0], new Chunk[0]);
    /** Label groups (values of the labels sorting before {@code lora_name}) by id; ids let chunks skip strings. */
    private final List<String> groupNames = new CopyOnWriteArrayList<>();

    private final Map<String, Integer> groupIds = new HashMap<>();

    private record State(RowLines[] rows, Chunk[] chunks) {}

    AdapterLinesCache(String model, String engine) {
        this.model = model;
        this.engine = engine;
        for (AdapterFamily f : AdapterFamily.values()) {
            headers.put(f, TextFormat.header(f.sampleName(), f.type, f.help));
        }
    }

    /** The chunks of the rows (sorted by name), reusing every row and chunk whose numbers did not change. */
    List<Chunk> chunksOf(List<AdapterRow> rows) {
        State previous = state;
        RowLines[] lines = new RowLines[rows.size()];
        int p = 0;
        for (int i = 0; i < lines.length; i++) {
            AdapterRow row = rows.get(i);
            while (p < previous.rows.length
                    && !previous.rows[p].row.name().equals(row.name())
                    && previous.rows[p].row.name().compareTo(row.name()) < 0) {
                p++;
            }
            boolean same = p < previous.rows.length && previous.rows[p].row.equals(row);
            lines[i] = same ? previous.rows[p] : new RowLines(row);
        }
        List<Chunk> chunks = new ArrayList<>(lines.length / (CHUNK_HASH_MASK + 1) + 2);
        int start = 0, c = 0;
        for (int i = 0; i < lines.length; i++) {
            boolean boundary = (lines[i].row.name().hashCode() & CHUNK_HASH_MASK) == 0
                    || i - start + 1 == MAX_CHUNK
                    || i == lines.length - 1;
            if (!boundary) continue;
            RowLines[] members = Arrays.copyOfRange(lines, start, i + 1);
            String first = members[0].row.name();
            while (c < previous.chunks.length && previous.chunks[c].firstName().compareTo(first) < 0) c++;
            Chunk reused = c < previous.chunks.length ? previous.chunks[c] : null;
            chunks.add(reused != null && reused.hasMembers(members) ? reused : Chunk.of(members));
            start = i + 1;
        }
        state = new State(lines, chunks.toArray(Chunk[]::new));
        return chunks;
    }

    /** One family: header, then samples grouped by the labels that sort before {@code lora_name}, rows in order. */
    void write(PageBuffer out, AdapterFamily family, List<Chunk> chunks) {
        int index = family.ordinal();
        for (Chunk chunk : chunks) chunk.assemble(index, this);
        boolean[] present = new boolean[groupNames.size()];
        int count = 0;
        for (Chunk chunk : chunks) {
            for (int id : chunk.groups[index]) {
                if (!present[id]) count++;
                present[id] = true;
            }
        }
        if (count == 0) return;
        List<Integer> groups = new ArrayList<>(count);
        for (int id = 0; id < present.length; id++) if (present[id]) groups.add(id);
        groups.sort((x, y) -> groupNames.get(x).compareTo(groupNames.get(y)));
        out.add(headers.get(family));
        for (int group : groups) {
            for (Chunk chunk : chunks) {
                int[] chunkGroups = chunk.groups[index];
                for (int g = 0; g < chunkGroups.length; g++) {
                    if (chunkGroups[g] == group) out.add(chunk.blocks[index][g]);
                }
            }
        }
    }

    private synchronized int groupId(String group) {
        Integer id = groupIds.get(group);
        if (id == null) {
            id = groupNames.size();
            groupNames.add(group);
            groupIds.put(group, id);
        }
        return id;
    }

    private Line[] render(AdapterRow row, AdapterFamily family) {
        List<Line> out = new ArrayList<>(4);
        family.emit(row, (value, labelValues) -> out.add(line(family, row.name(), value, labelValues)));
        return out.toArray(Line[]::new);
    }

    private Line line(AdapterFamily family, String loraName, double value, String[] labelValues) {
        int n = 3 + family.labels.size();
        String[][] labels = new String[n][];
        labels[0] = new String[] {"model_name", model};
        labels[1] = new String[] {"engine", engine};
        labels[2] = new String[] {"lora_name", loraName};
        for (int i = 0; i < family.labels.size(); i++)
            labels[3 + i] = new String[] {family.labels.get(i), labelValues[i]};
        Arrays.sort(labels, (a, b) -> a[0].compareTo(b[0]));
        StringBuilder group = new StringBuilder();
        StringBuilder text = new StringBuilder(128).append(family.sampleName()).append('{');
        for (int i = 0; i < n; i++) {
            if (labels[i][0].compareTo("lora_name") < 0)
                group.append(labels[i][1]).append('\0');
            if (i > 0) text.append(',');
            text.append(labels[i][0]).append("=\"");
            TextFormat.escapeLabelValue(text, labels[i][1]);
            text.append('"');
        }
        text.append("} ").append(TextFormat.formatValue(value)).append('\n');
        return new Line(groupId(group.toString()), text.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** A rendered sample and the id of the values of its labels that sort before {@code lora_name}. */
    private record Line(int group, byte[] bytes) {}

    /**
     * One row's numbers and its samples, rendered per family on first use (indexed by family ordinal). Shared by
     * the scrapes that find the row unchanged, which may run concurrently.
     */
    private static final class RowLines {
        final AdapterRow row;
        private final Line[][] byFamily = new Line[FAMILIES][];

        RowLines(AdapterRow row) {
            this.row = row;
        }

        synchronized Line[] lines(int family, AdapterLinesCache cache) {
            Line[] lines = byFamily[family];
            if (lines == null) {
                lines = cache.render(row, AdapterFamily.values()[family]);
                byFamily[family] = lines;
            }
            return lines;
        }
    }

    /**
     * Neighbouring rows with their lines joined: for each family, one block per label group, groups sorted; a
     * family's blocks are joined the first time a scrape writes that family.
     */
    static final class Chunk {
        private final RowLines[] members;
        /**
         * Per family: the group ids present, and the joined lines of each; null until {@link #assemble}, which every
         * reader calls first (its lock makes the arrays it filled visible to a scrape on another thread).
         */
        private final int[][] groups = new int[FAMILIES][];

        private final byte[][][] blocks = new byte[FAMILIES][][];

        private Chunk(RowLines[] members) {
            this.members = members;
        }

        static Chunk of(RowLines[] members) {
            return new Chunk(members);
        }

        /** Joins family {@code f}'s lines, once. */
        synchronized void assemble(int f, AdapterLinesCache cache) {
            if (groups[f] != null) return;
            int[] ids = new int[4];
            ByteArrayOutputStream[] joined = new ByteArrayOutputStream[4];
            int count = 0;
            for (RowLines row : members) {
                for (Line line : row.lines(f, cache)) {
                    int g = 0;
                    while (g < count && ids[g] != line.group) g++;
                    if (g == count) {
                        if (count == ids.length) {
                            ids = Arrays.copyOf(ids, count * 2);
                            joined = Arrays.copyOf(joined, count * 2);
                        }
                        ids[count] = line.group;
                        joined[count++] = new ByteArrayOutputStream(members.length * 160);
                    }
                    joined[g].writeBytes(line.bytes);
                }
            }
            blocks[f] = new byte[count][];
            for (int g = 0; g < count; g++) blocks[f][g] = joined[g].toByteArray();
            groups[f] = Arrays.copyOf(ids, count);
        }

        String firstName() {
            return members[0].row.name();
        }

        /** Same rows with the same numbers: the row lines are shared, so identity tells. */
        boolean hasMembers(RowLines[] rows) {
            if (rows.length != members.length) return false;
            for (int i = 0; i < rows.length; i++) if (rows[i] != members[i]) return false;
            return true;
        }
    }
}
