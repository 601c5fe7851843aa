package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.router.RouterOptions;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.Filter;
import dev.patchbay.router.pick.OwnPicksCounter;
import dev.patchbay.router.pick.PreRequest;
import dev.patchbay.router.pick.WeightedScorer;
import dev.patchbay.router.pick.profile.Plugin;
import dev.patchbay.router.pick.profile.PluginParameters;
import dev.patchbay.router.pick.profile.PluginType;
import dev.patchbay.router.pick.profile.PluginTypes;
import dev.patchbay.router.pick.profile.ProfileFile;
import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code docs/configuration.md} against the code, both ways: every flag of every {@code patchbay} subcommand (from
 * picocli's {@link CommandSpec}), every key of {@code router.json} (the components of {@link RouterConfig} and its
 * nested records, as Jackson reads them) and every parameter of every plugin type ({@link PluginTypes}) is in the
 * reference with the default the code has, and the reference names nothing the code lacks.
 *
 * <p>A default written as one code span is a literal: a flag's must equal picocli's default (or the field's initial
 * value), a key's or a parameter's is a JSON value that, given explicitly, must build the same router as leaving it
 * out, while some other value builds a different one (so a key the code ignores cannot pass). A default in words is
 * allowed only where the code has none of its own.
 */
class ConfigurationReferenceTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern MARKER =
            Pattern.compile("^<!-- (flags: (\\S+)|keys: router\\.json|plugin-parameters) -->$");
    private static final Pattern ONE_CODE_SPAN = Pattern.compile("^`([^`]*)`$");
    private static final String NO_PARAMETERS = "(none)";

    private static String reference() throws IOException {
        return Files.readString(RequiredTool.repositoryRoot().resolve("docs/configuration.md"));
    }

    @Test
    void everyFlagKeyAndPluginParameterIsDocumentedWithItsDefault() throws IOException {
        assertThat(problems(reference())).isEmpty();
    }

    @Test
    void aFlagLeftOutIsReported() throws IOException {
        String doc = without(reference(), "| `--staleness` |");
        assertThat(problems(doc)).containsExactly("patchbay route: --staleness is not in the reference");
    }

    @Test
    void aFlagWithAWrongDefaultIsReported() throws IOException {
        String doc = replaced(
                reference(), "| `--max-num-batched-tokens` | `8192` |", "| `--max-num-batched-tokens` | `4096` |");
        assertThat(problems(doc))
                .containsExactly(
                        "patchbay serve: --max-num-batched-tokens defaults to 8192 in the code, the reference says `4096`");
    }

    @Test
    void aFlagWithADefaultInWordsWhereTheCodeHasOneIsReported() throws IOException {
        String doc = replaced(
                reference(),
                "| `--scrape-path` | `snapshot` | `text`: render",
                "| `--scrape-path` | the fast one | `text`: render");
        assertThat(problems(doc))
                .containsExactly(
                        "patchbay simulate: --scrape-path defaults to snapshot in the code, the reference gives it in words");
    }

    @Test
    void aFlagTheCommandLacksIsReported() throws IOException {
        String doc = replaced(
                reference(), "| `--admin-port` |", "| `--no-such-flag` | none | made up |\n| `--admin-port` |");
        assertThat(problems(doc))
                .containsExactly(
                        "patchbay gateway: the reference names --no-such-flag, which the command does not have");
    }

    @Test
    void aConfigKeyLeftOutOrWithAWrongDefaultIsReported() throws IOException {
        String doc = without(reference(), "| `seed` |");
        doc = replaced(
                doc,
                "| `flowControl.saturation.queueDepthThreshold` | `5` |",
                "| `flowControl.saturation.queueDepthThreshold` | `6` |");
        assertThat(problems(doc))
                .containsExactly(
                        "router.json: flowControl.saturation.queueDepthThreshold given as the documented default 6 builds "
                                + "another router than leaving it out",
                        "router.json: seed is not in the reference");
    }

    @Test
    void aConfigKeyTheCodeLacksIsReported() throws IOException {
        String doc = replaced(reference(), "| `seed` |", "| `maxRetries` | `1` | made up |\n| `seed` |");
        assertThat(problems(doc))
                .containsExactly("router.json: the reference names maxRetries, which the code does not read");
    }

    @Test
    void aPluginParameterWithAWrongDefaultOrATypeLeftOutIsReported() throws IOException {
        String doc = replaced(
                reference(), "| `queue-scorer` | `minSpread` | `0` |", "| `queue-scorer` | `minSpread` | `2` |");
        doc = without(doc, "| `kv-cache-scorer` | (none) |");
        assertThat(problems(doc))
                .containsExactly(
                        "plugin queue-scorer: minSpread given as the documented default 2 builds another picker than "
                                + "leaving it out",
                        "plugin kv-cache-scorer is not in the reference (a type without parameters has a (none) row)");
    }

    @Test
    void aPluginParameterTheTypeLacksIsReported() throws IOException {
        String doc = replaced(
                reference(),
                "| `queue-scorer` | `minSpread` |",
                "| `queue-scorer` | `maxHeld` | `10000` | made up |\n| `queue-scorer` | `minSpread` |");
        assertThat(problems(doc))
                .containsExactly("plugin queue-scorer: the reference names maxHeld, which the type does not take");
    }

    /** The profile guide's example profile file is one the router reads. */
    @Test
    void theProfileGuidesExampleIsAValidProfileFile() throws IOException {
        String guide = Files.readString(RequiredTool.repositoryRoot().resolve("docs/profiles.md"));
        int marker = guide.indexOf("<!-- profile-file-example");
        assertThat(marker).as("docs/profiles.md's example marker").isPositive();
        int start = guide.indexOf("```json", marker) + "```json".length();
        ProfileFile file = ProfileFile.parse("docs/profiles.md", guide.substring(start, guide.indexOf("```", start)));
        assertThat(file.names()).containsExactly("host-heavy");
        EndpointPicker picker = file.profile("host-heavy").create(new Random(1), () -> 0L);
        assertThat(picker.preRequests()).hasAtLeastOneElementOfType(OwnPicksCounter.class);
    }

    // ---- the check ----

    /** Every disagreement between the reference and the code, in a stable order; empty when they agree. */
    static List<String> problems(String doc) {
        Map<String, List<List<String>>> tables = tables(doc);
        List<String> problems = new ArrayList<>();
        checkFlags(tables, problems);
        checkConfigKeys(tables.getOrDefault("keys", List.of()), problems);
        checkPluginParameters(tables.getOrDefault("plugins", List.of()), problems);
        return problems;
    }

    /**
     * The tables after each marker, by marker ({@code flags:serve}, ..., {@code keys}, {@code plugins}): the rows
     * below the header and separator, each split into trimmed cells.
     */
    static Map<String, List<List<String>>> tables(String doc) {
        Map<String, List<List<String>>> tables = new LinkedHashMap<>();
        String[] lines = doc.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            Matcher m = MARKER.matcher(lines[i].strip());
            if (!m.matches()) {
                continue;
            }
            String key =
                    m.group(2) != null ? "flags:" + m.group(2) : m.group(1).startsWith("keys") ? "keys" : "plugins";
            List<List<String>> rows = new ArrayList<>();
            int j = i + 1;
            for (int line = 0; j < lines.length && lines[j].startsWith("|"); j++, line++) {
                if (line >= 2) { // header and separator
                    rows.add(cells(lines[j]));
                }
            }
            if (tables.put(key, rows) != null) {
                throw new AssertionError("two tables marked " + lines[i]);
            }
        }
        return tables;
    }

    /** A table row's cells; a pipe inside a cell is written \|. */
    static List<String> cells(String row) {
        String inner = row.strip();
        inner = inner.substring(1, inner.endsWith("|") ? inner.length() - 1 : inner.length());
        List<String> cells = new ArrayList<>();
        for (String cell : inner.split("(?<!\\\\)\\|", -1)) {
            cells.add(cell.strip().replace("\\|", "|"));
        }
        return cells;
    }

    /** The content of a cell that is exactly one code span, else null (a default in words). */
    static String literal(String cell) {
        Matcher m = ONE_CODE_SPAN.matcher(cell);
        return m.matches() ? m.group(1) : null;
    }

    private static void checkFlags(Map<String, List<List<String>>> tables, List<String> problems) {
        Map<String, CommandLine> commands = new CommandLine(new Main()).getSubcommands();
        for (String key : tables.keySet()) {
            if (key.startsWith("flags:") && !commands.containsKey(key.substring("flags:".length()))) {
                problems.add("the reference has flags of patchbay " + key.substring("flags:".length())
                        + ", which is no subcommand");
            }
        }
        for (Map.Entry<String, CommandLine> command : commands.entrySet()) {
            String name = "patchbay " + command.getKey();
            CommandSpec spec = command.getValue().getCommandSpec();
            Map<String, OptionSpec> options = new LinkedHashMap<>();
            for (OptionSpec o : spec.options()) {
                if (!o.usageHelp() && !o.versionHelp()) {
                    options.put(o.longestName(), o);
                }
            }
            List<List<String>> rows = tables.get("flags:" + command.getKey());
            if (rows == null) {
                if (!options.isEmpty()) {
                    problems.add(name + " has no table of flags in the reference");
                }
                continue;
            }
            Map<String, String> documented = new LinkedHashMap<>();
            for (List<String> row : rows) {
                String flag = literal(row.get(0));
                if (flag == null || row.size() < 3) {
                    problems.add(name + ": a row is not | `--flag` | default | meaning |: " + row);
                } else if (documented.put(flag, row.get(1)) != null) {
                    problems.add(name + ": " + flag + " is in the reference twice");
                }
            }
            for (String flag : options.keySet()) {
                if (!documented.containsKey(flag)) {
                    problems.add(name + ": " + flag + " is not in the reference");
                }
            }
            for (Map.Entry<String, String> doc : documented.entrySet()) {
                OptionSpec option = options.get(doc.getKey());
                if (option == null) {
                    problems.add(name + ": the reference names " + doc.getKey() + ", which the command does not have");
                    continue;
                }
                String code = codeDefault(option);
                String given = literal(doc.getValue());
                String where = name + ": " + doc.getKey();
                if (code != null && given == null) {
                    problems.add(where + " defaults to " + code + " in the code, the reference gives it in words");
                } else if (code == null && given != null) {
                    problems.add(where + " has no default in the code, the reference says `" + given + "`");
                } else if (code != null && !sameValue(code, given)) {
                    problems.add(where + " defaults to " + code + " in the code, the reference says `" + given + "`");
                }
                if (option.required() != doc.getValue().startsWith("required")) {
                    problems.add(where
                            + (option.required()
                                    ? " is required, the reference does not say so"
                                    : " is not required, the reference says it is"));
                }
            }
        }
    }

    /** picocli's default value, else the field's initial value; null for none (null, or an empty list). */
    static String codeDefault(OptionSpec option) {
        if (option.defaultValue() != null) {
            return option.defaultValue();
        }
        Object initial = option.initialValue();
        if (initial == null || (initial instanceof Collection<?> c && c.isEmpty())) {
            return null;
        }
        return initial instanceof Collection<?> c
                ? String.join(",", c.stream().map(String::valueOf).toList())
                : String.valueOf(initial);
    }

    /** Equal as text, or as numbers (30 and 30.0). */
    static boolean sameValue(String a, String b) {
        if (a.equals(b)) {
            return true;
        }
        try {
            return new BigDecimal(a).compareTo(new BigDecimal(b)) == 0;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    // ---- router.json ----

    private static void checkConfigKeys(List<List<String>> rows, List<String> problems) {
        Set<String> keys = new LinkedHashSet<>();
        Set<String> objects = new LinkedHashSet<>();
        configKeys(RouterConfig.class, "", keys, objects);
        Map<String, String> documented = new LinkedHashMap<>();
        for (List<String> row : rows) {
            String key = literal(row.get(0));
            if (key == null || row.size() < 3) {
                problems.add("router.json: a row is not | `key` | default | meaning |: " + row);
            } else if (documented.put(key, row.get(1)) != null) {
                problems.add("router.json: " + key + " is in the reference twice");
            }
        }
        Map<String, Object> defaults = effective(RouterConfig.DEFAULT);
        for (Map.Entry<String, String> doc : documented.entrySet()) {
            String key = doc.getKey();
            if (!keys.contains(key)) {
                problems.add("router.json: the reference names " + key + ", which the code does not read");
                continue;
            }
            String given = literal(doc.getValue());
            if (given == null) {
                if (defaults.get(key) != null && !objects.contains(key)) {
                    problems.add("router.json: " + key + " defaults to " + defaults.get(key)
                            + " in the code, the reference gives it in words");
                }
                continue;
            }
            if (key.contains("[]")) {
                problems.add("router.json: " + key + " is inside a list and has no default, the reference says `"
                        + given + "`");
                continue;
            }
            JsonNode value;
            try {
                value = JSON.readTree(given);
            } catch (IOException e) {
                problems.add("router.json: " + key + "'s default `" + given + "` is not a JSON value");
                continue;
            }
            Map<String, Object> withDefault = configWith(key, value);
            if (withDefault == null || !withDefault.equals(defaults)) {
                problems.add("router.json: " + key + " given as the documented default " + given
                        + " builds another router than leaving it out");
                continue;
            }
            if (otherValues(value).stream()
                    .map(v -> configWith(key, v))
                    .noneMatch(c -> c != null && !c.equals(defaults))) {
                problems.add("router.json: no other value of " + key + " changes the router built: is it read?");
            }
        }
        for (String key : keys) {
            if (!documented.containsKey(key)) {
                problems.add("router.json: " + key + " is not in the reference");
            }
        }
    }

    /**
     * Every key Jackson reads into {@code type}: its record components, with those of nested records after a dot
     * and those of a list's record elements after {@code []}.
     */
    static void configKeys(Class<?> type, String prefix, Set<String> keys, Set<String> objects) {
        for (RecordComponent component : type.getRecordComponents()) {
            String key = prefix + component.getName();
            keys.add(key);
            Class<?> raw = component.getType();
            if (raw.isRecord()) {
                objects.add(key);
                configKeys(raw, key + ".", keys, objects);
            } else if (List.class.isAssignableFrom(raw)
                    && component.getGenericType() instanceof ParameterizedType list
                    && list.getActualTypeArguments()[0] instanceof Class<?> element
                    && element.isRecord()) {
                objects.add(key);
                configKeys(element, key + "[].", keys, objects);
            }
        }
    }

    /** What the router does with {@code config}: each key's value as the router ends up using it. */
    static Map<String, Object> effective(RouterConfig config) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (RecordComponent component : RouterConfig.class.getRecordComponents()) {
            String key = component.getName();
            Object value = switch (key) {
                case "flowControl" -> config.effectiveFlowControl();
                case "servedModelsInterval" -> RouterOptions.servedModelsInterval(config);
                case "placement" -> config.effectivePlacement();
                default -> invoke(component, config);
            };
            put(values, key, value);
        }
        return values;
    }

    /** {@code value} under {@code key}, and a record's components under {@code key.component}, all the way down. */
    private static void put(Map<String, Object> values, String key, Object value) {
        values.put(key, value); // values compare by value (strings, lists, maps, records, durations)
        if (value instanceof Record record) {
            for (RecordComponent inner : record.getClass().getRecordComponents()) {
                put(values, key + "." + inner.getName(), invoke(inner, record));
            }
        }
    }

    /** The effective values of a configuration with {@code key} set to {@code value}; null when it is refused. */
    static Map<String, Object> configWith(String key, JsonNode value) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        String[] path = key.split("\\.");
        ObjectNode parent = root;
        for (int i = 0; i < path.length - 1; i++) {
            parent = parent.putObject(path[i]);
        }
        parent.set(path[path.length - 1], value);
        try {
            return effective(RouterConfig.parse(root.toString()));
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
    }

    // ---- plugin types ----

    private static void checkPluginParameters(List<List<String>> rows, List<String> problems) {
        Map<String, Map<String, String>> documented = new LinkedHashMap<>();
        for (List<String> row : rows) {
            String type = literal(row.get(0));
            String parameter =
                    row.size() < 4 ? null : row.get(1).equals(NO_PARAMETERS) ? NO_PARAMETERS : literal(row.get(1));
            if (type == null || parameter == null) {
                problems.add("plugin parameters: a row is not | `type` | `parameter` or (none) | default | meaning |: "
                        + row);
            } else if (documented
                            .computeIfAbsent(type, t -> new LinkedHashMap<>())
                            .put(parameter, row.get(2))
                    != null) {
                problems.add("plugin " + type + ": " + parameter + " is in the reference twice");
            }
        }
        for (String type : documented.keySet()) {
            if (PluginTypes.find(type) == null) {
                problems.add("plugin parameters: the reference names the type " + type + ", which the router lacks");
            }
        }
        for (String type : PluginTypes.names()) {
            PluginType pluginType = PluginTypes.find(type);
            Map<String, String> doc = documented.get(type);
            if (doc == null) {
                problems.add("plugin " + type + " is not in the reference"
                        + (pluginType.parameters().isEmpty() ? " (a type without parameters has a (none) row)" : ""));
                continue;
            }
            if (doc.containsKey(NO_PARAMETERS) && !pluginType.parameters().isEmpty()) {
                problems.add("plugin " + type + " takes " + pluginType.parameters() + ", the reference says none");
            }
            for (String parameter : pluginType.parameters()) {
                if (!doc.containsKey(parameter)) {
                    problems.add("plugin " + type + ": " + parameter + " is not in the reference");
                }
            }
            List<String> without = fingerprint(type, null, null);
            for (Map.Entry<String, String> entry : doc.entrySet()) {
                String parameter = entry.getKey();
                if (parameter.equals(NO_PARAMETERS)) {
                    continue;
                }
                if (!pluginType.parameters().contains(parameter)) {
                    problems.add(
                            "plugin " + type + ": the reference names " + parameter + ", which the type does not take");
                    continue;
                }
                String given = literal(entry.getValue());
                JsonNode value;
                try {
                    value = given == null ? null : JSON.readTree(given);
                } catch (IOException e) {
                    value = null;
                }
                if (value == null) {
                    problems.add("plugin " + type + ": " + parameter
                            + " needs its default as a JSON value in one code span");
                    continue;
                }
                List<String> withDefault = fingerprint(type, parameter, value);
                if (!without.equals(withDefault)) {
                    problems.add("plugin " + type + ": " + parameter + " given as the documented default " + given
                            + " builds another picker than leaving it out");
                    continue;
                }
                boolean read = false;
                for (JsonNode other : otherValues(value)) {
                    List<String> changed = fingerprint(type, parameter, other);
                    read |= changed != null && !changed.equals(without);
                }
                if (!read) {
                    problems.add(
                            "plugin " + type + ": no other value of " + parameter + " changes the picker: is it read?");
                }
            }
        }
    }

    /**
     * A picker of one profile using only the plugin {@code type}, with {@code parameter} set to {@code value} (none
     * when null), written out part by part with every field; null when the value is refused.
     */
    static List<String> fingerprint(String type, String parameter, JsonNode value) {
        ObjectNode plugin = JsonNodeFactory.instance.objectNode().put("type", type);
        if (parameter != null) {
            plugin.putObject("parameters").set(parameter, value);
        }
        ObjectNode ref = JsonNodeFactory.instance.objectNode().put("pluginRef", type);
        if (PluginTypes.find(type).plugin(PluginParameters.NONE) instanceof Plugin.ScorerPlugin) {
            ref.put("weight", 1);
        }
        ObjectNode file = JsonNodeFactory.instance
                .objectNode()
                .put("apiVersion", "inference.networking.x-k8s.io/v1alpha1")
                .put("kind", "EndpointPickerConfig");
        file.putArray("plugins").add(plugin);
        ArrayNode profiles = file.putArray("schedulingProfiles");
        profiles.addObject().put("name", "reference").putArray("plugins").add(ref);
        EndpointPicker picker;
        try {
            picker = ProfileFile.parse("reference", file.toString())
                    .profile("reference")
                    .create(new Random(0), () -> 0L);
        } catch (IllegalArgumentException e) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        for (Filter filter : picker.filters()) {
            parts.add("filter " + fields(filter));
        }
        for (WeightedScorer scorer : picker.scorers()) {
            parts.add("scorer " + fields(scorer.scorer()) + " weight " + scorer.weight());
        }
        parts.add("picker " + fields(picker.picker()));
        for (PreRequest hook : picker.preRequests()) {
            parts.add("pre-request " + fields(hook));
        }
        return parts;
    }

    /** A part's class and its settings: fields of plain values and of records, recursively; state is left out. */
    static String fields(Object part) {
        StringBuilder sb = new StringBuilder(part.getClass().getSimpleName()).append('[');
        for (Class<?> c = part.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers())) {
                    continue;
                }
                Class<?> t = field.getType();
                boolean plain = t.isPrimitive()
                        || t == String.class
                        || Number.class.isAssignableFrom(t)
                        || t == Boolean.class
                        || t.isEnum()
                        || t == Duration.class;
                if (!plain && !t.isRecord()) {
                    continue; // maps of drains, clocks, random sources: state, not settings
                }
                field.setAccessible(true);
                Object value;
                try {
                    value = field.get(part);
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
                sb.append(field.getName())
                        .append('=')
                        .append(value instanceof Record r ? fields(r) : value)
                        .append(' ');
            }
        }
        return sb.append(']').toString();
    }

    /** Values other than {@code value} of the same kind, some of which a key or parameter should accept. */
    static List<JsonNode> otherValues(JsonNode value) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        List<JsonNode> others = new ArrayList<>();
        if (value.isIntegralNumber()) {
            long n = value.longValue();
            others.addAll(List.of(f.numberNode(n + 1), f.numberNode(n / 2), f.numberNode(n - 1)));
        } else if (value.isNumber()) {
            double d = value.doubleValue();
            for (double other : new double[] {d + 1, d / 2, d - 0.05, d + 0.1, d + 0.01}) {
                others.add(f.numberNode(other));
            }
        } else if (value.isBoolean()) {
            others.add(f.booleanNode(!value.booleanValue()));
        } else if (value.isTextual()) {
            others.addAll(List.of(f.textNode("7s"), f.textNode("least-queue"), f.textNode("dynamo-hrw")));
        } else if (value.isObject() && value.isEmpty()) {
            others.add(f.objectNode().put("queue", 1));
            others.add(f.objectNode().put("batch", -1));
        } else if (value.isArray() && value.isEmpty()) {
            others.add(f.arrayNode().add("some-model"));
            ObjectNode rewrite = f.objectNode().put("model", "a");
            rewrite.putArray("targets").addObject().put("model", "b").put("weight", 1);
            others.add(f.arrayNode().add(rewrite));
        }
        others.removeIf(value::equals);
        return others;
    }

    private static Object invoke(RecordComponent component, Object record) {
        try {
            return component.getAccessor().invoke(record);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    // ---- editing the reference for the tests that show the check failing ----

    private static String without(String doc, String rowStart) {
        String[] lines = doc.split("\n", -1);
        List<String> kept = new ArrayList<>();
        int dropped = 0;
        for (String line : lines) {
            if (line.startsWith(rowStart)) {
                dropped++;
            } else {
                kept.add(line);
            }
        }
        assertThat(dropped).as("rows starting with " + rowStart).isEqualTo(1);
        return String.join("\n", kept);
    }

    private static String replaced(String doc, String from, String to) {
        assertThat(doc.indexOf(from)).as(from).isNotNegative();
        assertThat(doc.indexOf(from, doc.indexOf(from) + 1))
                .as("a second " + from)
                .isNegative();
        return doc.replace(from, to);
    }
}
