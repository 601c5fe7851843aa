package dev.patchbay.router.pick.profile;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.patchbay.router.pick.profile.EndpointPickerConfig.PluginRef;
import dev.patchbay.router.pick.profile.EndpointPickerConfig.PluginSpec;
import dev.patchbay.router.pick.profile.EndpointPickerConfig.SchedulingProfile;
import dev.patchbay.router.pick.profile.Plugin.FilterPlugin;
import dev.patchbay.router.pick.profile.Plugin.PickerPlugin;
import dev.patchbay.router.pick.profile.Plugin.PreRequestPlugin;
import dev.patchbay.router.pick.profile.Plugin.ScorerPlugin;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A profile file: picking profiles as data, in the shape of the Gateway API Inference Extension's (and llm-d's)
 * {@code EndpointPickerConfig}, written in JSON ({@code //} and {@code /* *}{@code /} comments allowed). Its
 * {@code plugins} list named filters, scorers and pickers with their parameters; each of its
 * {@code schedulingProfiles} is one profile, referring to plugins by name with a weight for each scorer. The
 * built-in profiles are such files ({@link dev.patchbay.router.pick.Profiles}); router/README.md describes the
 * format.
 *
 * <p>Everything is checked when the file is read, and every error names the file, the profile and the entry at
 * fault, since a router that starts with a profile other than the one meant is worse than one that does not start.
 */
public final class ProfileFile {
    public static final String API_VERSION = "inference.networking.x-k8s.io/v1alpha1";
    public static final String KIND = "EndpointPickerConfig";

    // NaN and Infinity parse as numbers so that a weight of NaN gets this class's message, not a syntax error.
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_JAVA_COMMENTS, JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private final String source;
    private final Map<String, ProfileDefinition> profiles;

    private ProfileFile(String source, Map<String, ProfileDefinition> profiles) {
        this.source = source;
        this.profiles = profiles;
    }

    /**
     * Reads and checks a profile file. IOException when it cannot be read; IllegalArgumentException, naming the file,
     * when it is not a valid profile file.
     */
    public static ProfileFile read(Path file) throws IOException {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IOException("cannot read profile file " + file + ": " + e, e);
        }
        return parse(file.toString(), text);
    }

    /** Checks a profile file's text; {@code source} names it in error messages. */
    public static ProfileFile parse(String source, String json) {
        EndpointPickerConfig config;
        try {
            config = JSON.readValue(json, EndpointPickerConfig.class);
        } catch (JsonProcessingException e) {
            var at = e.getLocation();
            throw new IllegalArgumentException(
                    "profile file " + source
                            + (at == null ? "" : ", line " + at.getLineNr() + ", column " + at.getColumnNr())
                            + ": " + e.getOriginalMessage(),
                    e);
        }
        if (config == null) {
            throw new IllegalArgumentException("profile file " + source + " is empty");
        }
        return new ProfileFile(source, new Resolver(source, config).profiles());
    }

    /** Where the file came from: its path, or for a built-in profile its resource path. */
    public String source() {
        return source;
    }

    /** The profiles' names, in the file's order. */
    public List<String> names() {
        return List.copyOf(profiles.keySet());
    }

    /** The profile of that name, or null. */
    public ProfileDefinition profile(String name) {
        return profiles.get(name);
    }

    /** Turns the file as written into checked profiles; one per file read. */
    private static final class Resolver {
        private final String source;
        private final EndpointPickerConfig config;
        /** Plugin name to the profiles referring to it, for messages about the plugin. */
        private final Map<String, List<String>> usedBy = new LinkedHashMap<>();

        private final Map<String, Plugin> plugins = new LinkedHashMap<>();

        Resolver(String source, EndpointPickerConfig config) {
            this.source = source;
            this.config = config;
        }

        Map<String, ProfileDefinition> profiles() {
            if (!API_VERSION.equals(config.apiVersion())) {
                throw error("apiVersion must be " + API_VERSION + ", got " + quoted(config.apiVersion()));
            }
            if (!KIND.equals(config.kind())) {
                throw error("kind must be " + KIND + ", got " + quoted(config.kind()));
            }
            if (config.schedulingProfiles() == null
                    || config.schedulingProfiles().isEmpty()) {
                throw error("no schedulingProfiles");
            }
            for (SchedulingProfile profile : config.schedulingProfiles()) {
                for (PluginRef ref : profile.plugins() == null ? List.<PluginRef>of() : profile.plugins()) {
                    if (ref != null && ref.pluginRef() != null) {
                        usedBy.computeIfAbsent(ref.pluginRef(), k -> new ArrayList<>())
                                .add(profile.name());
                    }
                }
            }
            readPlugins();
            Map<String, ProfileDefinition> profiles = new LinkedHashMap<>();
            for (int i = 0; i < config.schedulingProfiles().size(); i++) {
                SchedulingProfile profile = config.schedulingProfiles().get(i);
                if (profile == null || profile.name() == null || profile.name().isBlank()) {
                    throw error("schedulingProfiles[" + i + "] has no name");
                }
                if (profiles.containsKey(profile.name())) {
                    throw error("two schedulingProfiles named '" + profile.name() + "'");
                }
                profiles.put(profile.name(), resolve(profile));
            }
            return profiles;
        }

        private void readPlugins() {
            List<PluginSpec> specs = config.plugins() == null ? List.of() : config.plugins();
            for (int i = 0; i < specs.size(); i++) {
                PluginSpec spec = specs.get(i);
                if (spec == null || spec.type() == null || spec.type().isBlank()) {
                    throw error("plugins[" + i + "]"
                            + (spec != null && spec.name() != null ? " ('" + spec.name() + "')" : "") + " has no type");
                }
                String name = spec.nameOrType();
                if (plugins.containsKey(name)) {
                    throw error("two plugins named '" + name + "' (give one a name of its own)");
                }
                PluginType type = PluginTypes.find(spec.type());
                if (type == null) {
                    throw error(where(name, null) + ": unknown type '" + spec.type() + "'; known: "
                            + String.join(", ", PluginTypes.names()));
                }
                try {
                    plugins.put(name, type.plugin(new PluginParameters(spec.parameters())));
                } catch (IllegalArgumentException e) {
                    throw error(where(name, spec.type()) + ": " + e.getMessage());
                }
            }
        }

        private ProfileDefinition resolve(SchedulingProfile profile) {
            String at = "profile '" + profile.name() + "'";
            if (profile.plugins() == null || profile.plugins().isEmpty()) {
                throw error(at + ": no plugins");
            }
            List<FilterPlugin> filters = new ArrayList<>();
            List<ProfileDefinition.Weighted> scorers = new ArrayList<>();
            PickerPlugin picker = null;
            String pickerName = null;
            List<PreRequestPlugin> preRequests = new ArrayList<>();
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < profile.plugins().size(); i++) {
                PluginRef ref = profile.plugins().get(i);
                if (ref == null || ref.pluginRef() == null || ref.pluginRef().isBlank()) {
                    throw error(at + ": plugins[" + i + "] has no pluginRef");
                }
                String name = ref.pluginRef();
                String entry = at + ", pluginRef '" + name + "'";
                Plugin plugin = plugins.get(name);
                if (plugin == null) {
                    throw error(entry + ": names no plugin; plugins: " + String.join(", ", plugins.keySet()));
                }
                if (!seen.add(name)) {
                    throw error(entry + ": referred to twice");
                }
                if (ref.weight() != null && !(plugin instanceof ScorerPlugin)) {
                    throw error(entry + ": a weight applies only to scorers, and this is a " + plugin.kind());
                }
                switch (plugin) {
                    case FilterPlugin f -> filters.add(f);
                    case ScorerPlugin s ->
                        scorers.add(new ProfileDefinition.Weighted(name, s, weight(entry, ref.weight())));
                    case PickerPlugin p -> {
                        if (picker != null) {
                            throw error(entry + ": a second picker (the first is '" + pickerName + "')");
                        }
                        picker = p;
                        pickerName = name;
                    }
                    case PreRequestPlugin h -> preRequests.add(h);
                }
            }
            return new ProfileDefinition(
                    profile.name(),
                    filters,
                    scorers,
                    picker != null ? picker : PluginTypes.defaultPicker(),
                    preRequests);
        }

        private double weight(String entry, JsonNode weight) {
            if (weight == null) {
                return 1.0;
            }
            if (!weight.isNumber() || !Double.isFinite(weight.doubleValue()) || weight.doubleValue() < 0) {
                throw error(entry + ": weight must be a finite number >= 0, got " + PluginParameters.show(weight));
            }
            return weight.doubleValue();
        }

        /** A plugin and the profiles that use it, so that an error in its definition points at them. */
        private String where(String plugin, String type) {
            List<String> users = usedBy.getOrDefault(plugin, List.of());
            String typeNote = type == null ? "" : type + ", ";
            return switch (users.size()) {
                case 0 -> "plugin '" + plugin + "' (" + typeNote + "used by no profile)";
                case 1 ->
                    "profile '" + users.getFirst() + "', plugin '" + plugin + "'"
                            + (type == null ? "" : " (" + type + ")");
                default ->
                    "profiles '" + String.join("', '", users) + "', plugin '" + plugin + "'"
                            + (type == null ? "" : " (" + type + ")");
            };
        }

        private IllegalArgumentException error(String message) {
            return new IllegalArgumentException("profile file " + source + ": " + message);
        }

        private static String quoted(String s) {
            return s == null ? "nothing" : "'" + s + "'";
        }
    }
}
