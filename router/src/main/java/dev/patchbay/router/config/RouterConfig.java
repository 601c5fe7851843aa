package dev.patchbay.router.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import dev.patchbay.router.DurationOption;
import dev.patchbay.router.flow.FlowControl;
import dev.patchbay.router.flow.SaturationDetector;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.pick.profile.PluginContext;
import dev.patchbay.router.pick.profile.ProfileDefinition;
import dev.patchbay.router.pick.profile.ProfileFile;
import dev.patchbay.router.place.BalancedPlacement;
import dev.patchbay.router.place.Placement;
import dev.patchbay.router.place.PlacementSettings;
import dev.patchbay.router.place.Placements;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The router's configuration file (JSON). Every field is optional:
 * <pre>
 * {
 *   "profile": "patchbay",
 *   "profileFile": "profiles.json",
 *   "flowControl": {"slotWait": "1s", "saturation": {"queueDepthThreshold": 5, "kvCacheUtilThreshold": 0.8}},
 *   "baseModels": ["llama-3-8b"],
 *   "adapters": ["sql-v1", "sql-v2"],
 *   "rewrites": [{"model": "sql", "targets": [{"model": "sql-v1", "weight": 90}, {"model": "sql-v2", "weight": 10}]}],
 *   "objectives": {"batch": -1},
 *   "seed": 42,
 *   "servedModelsInterval": "1s",
 *   "placement": {"enabled": true, "algorithm": "balanced", "interval": "1s", "adapterPaths": {"sql-v3": "/lora/sql-v3"}}
 * }
 * </pre>
 * {@code profileFile} is a profile file ({@link ProfileFile}) whose profiles {@code profile} may name besides the
 * built-in ones; a relative path is taken from the directory of the config file ({@link #read}) or the working
 * directory ({@link #parse}). Without {@code profile}, a profile file's only profile is used (a file with several
 * needs {@code profile}). The file is read and checked with the config: a profile is declared there, whole, never
 * changed here.
 * {@code flowControl} is what happens to a request before its pick, whatever the profile: {@code slotWait}, how long
 * an adapter request waits in the router while no endpoint has a slot for its adapter (default {@code 1s} with the
 * {@code patchbay} profile, {@code 0s}, none, with any other), and {@code saturation}, when sheddable requests are
 * refused with 429.
 * {@code adapters}, when given, is the complete list of servable adapters: other names get 400.
 * {@code objectives} maps an {@code x-gateway-inference-objective} header value to a priority;
 * a negative priority makes the request sheddable.
 * {@code servedModelsInterval} is how often each server's {@code /v1/models} is read, a duration with a unit as on the
 * command line ({@code "0s"} reads none); {@code route --served-models-interval} wins over it.
 */
public record RouterConfig(
        String profile,
        ProfileFile profileFile,
        FlowControlConfig flowControl,
        List<String> baseModels,
        List<String> adapters,
        List<ModelRewrite> rewrites,
        Map<String, Integer> objectives,
        Long seed,
        Duration servedModelsInterval,
        PlacementConfig placement) {

    public static final RouterConfig DEFAULT =
            new RouterConfig(null, null, null, null, null, null, null, null, null, null);

    /** Without {@code placement}: the configurations written before there was one. */
    public RouterConfig(
            String profile,
            ProfileFile profileFile,
            FlowControlConfig flowControl,
            List<String> baseModels,
            List<String> adapters,
            List<ModelRewrite> rewrites,
            Map<String, Integer> objectives,
            Long seed,
            Duration servedModelsInterval) {
        this(
                profile,
                profileFile,
                flowControl,
                baseModels,
                adapters,
                rewrites,
                objectives,
                seed,
                servedModelsInterval,
                null);
    }

    /**
     * {@code placement}: each field optional. {@code enabled} (default false), {@code algorithm} ({@code balanced},
     * {@code dynamo-hrw}, {@code dynamo-mcf}), the {@link PlacementSettings} fields, and {@code adapterPaths}, where an
     * adapter's files are when no server lists it (a server's {@code /v1/models} gives the others).
     */
    public record PlacementConfig(
            Boolean enabled,
            String algorithm,
            Duration interval,
            Duration rateHalfLife,
            Integer maxLoadsPerTick,
            Integer releaseAfter,
            Integer reloadCooldown,
            Map<String, String> adapterPaths) {
        public PlacementConfig {
            adapterPaths = adapterPaths == null ? Map.of() : Map.copyOf(adapterPaths);
            if (algorithm != null && !Placements.ALGORITHMS.contains(algorithm)) {
                throw new IllegalArgumentException("unknown placement algorithm '" + algorithm + "'; known: "
                        + String.join(", ", Placements.ALGORITHMS));
            }
        }

        public boolean on() {
            return enabled != null && enabled;
        }

        public String algorithmName() {
            return algorithm == null ? BalancedPlacement.NAME : algorithm;
        }

        /** The settings, defaults filled in; a bad value is an IllegalArgumentException. */
        public PlacementSettings settings() {
            PlacementSettings d = PlacementSettings.DEFAULT;
            return new PlacementSettings(
                    interval != null ? interval : d.interval(),
                    rateHalfLife != null ? rateHalfLife : d.rateHalfLife(),
                    maxLoadsPerTick != null ? maxLoadsPerTick : d.maxLoadsPerTick(),
                    releaseAfter != null ? releaseAfter : d.releaseAfter(),
                    reloadCooldown != null ? reloadCooldown : d.reloadCooldown());
        }
    }

    /** The same configuration with placement switched on or off, its other placement settings kept. */
    public RouterConfig withPlacementOn(boolean on) {
        PlacementConfig p = effectivePlacement();
        return new RouterConfig(
                profile,
                profileFile,
                flowControl,
                baseModels,
                adapters,
                rewrites,
                objectives,
                seed,
                servedModelsInterval,
                new PlacementConfig(
                        on,
                        p.algorithm(),
                        p.interval(),
                        p.rateHalfLife(),
                        p.maxLoadsPerTick(),
                        p.releaseAfter(),
                        p.reloadCooldown(),
                        p.adapterPaths()));
    }

    /** Placement as configured, every default filled in (off, balanced, {@link PlacementSettings#DEFAULT}). */
    public PlacementConfig effectivePlacement() {
        PlacementConfig p =
                placement != null ? placement : new PlacementConfig(null, null, null, null, null, null, null, null);
        PlacementSettings settings = p.settings();
        return new PlacementConfig(
                p.on(),
                p.algorithmName(),
                settings.interval(),
                settings.rateHalfLife(),
                settings.maxLoadsPerTick(),
                settings.releaseAfter(),
                settings.reloadCooldown(),
                p.adapterPaths());
    }

    /** The directory a relative {@code profileFile} is taken from, as a deserialization attribute. */
    private static final String BASE_DIRECTORY = "patchbay.configDirectory";

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .registerModule(new SimpleModule()
                    .addDeserializer(ProfileFile.class, new ProfileFileReader())
                    .addDeserializer(Duration.class, new DurationReader()));

    /** {@code flowControl}: each field optional. */
    public record FlowControlConfig(Duration slotWait, SaturationConfig saturation) {}

    /** {@code flowControl.saturation}: the gateway's saturation detector's names; each field optional. */
    public record SaturationConfig(Double queueDepthThreshold, Double kvCacheUtilThreshold) {}

    public RouterConfig {
        if (profileFile != null) {
            for (String name : profileFile.names()) {
                if (Profiles.NAMES.contains(name)) {
                    // One name, one meaning: logs, metrics and docs say "patchbay" and mean the built-in one.
                    throw new IllegalArgumentException("profile file " + profileFile.source() + ": profile '" + name
                            + "' has the name of a built-in profile; give it a name of its own");
                }
            }
            if (profile == null && profileFile.names().size() > 1) {
                throw new IllegalArgumentException(
                        "profile file " + profileFile.source() + " defines several profiles ("
                                + String.join(", ", profileFile.names()) + "): name one in \"profile\"");
            }
        }
        profile = profile != null
                ? profile
                : profileFile != null ? profileFile.names().getFirst() : Profiles.DEFAULT;
        if (!Profiles.NAMES.contains(profile) && (profileFile == null || profileFile.profile(profile) == null)) {
            List<String> known = new ArrayList<>(Profiles.NAMES);
            if (profileFile != null) {
                known.addAll(profileFile.names());
            }
            throw new IllegalArgumentException("unknown profile '" + profile + "'; known: " + String.join(", ", known)
                    + (profileFile == null ? "" : " (built-in and from " + profileFile.source() + ")"));
        }
        baseModels = baseModels == null ? List.of() : List.copyOf(baseModels);
        adapters = adapters == null ? null : List.copyOf(adapters);
        rewrites = rewrites == null ? List.of() : List.copyOf(rewrites);
        objectives = objectives == null ? Map.of() : Map.copyOf(objectives);
        flowControl(profile, flowControl); // a bad value fails when the file is read
        if (placement != null) {
            placement.settings();
        }
    }

    public static RouterConfig read(Path file) throws IOException {
        try {
            Path directory = file.toAbsolutePath().getParent();
            return JSON.readerFor(RouterConfig.class)
                    .withAttribute(BASE_DIRECTORY, directory)
                    .readValue(file.toFile());
        } catch (JsonProcessingException e) {
            // Jackson's own message ends in a source and reference chain; the line and column say where more briefly.
            var at = e.getLocation();
            throw new IOException(
                    "cannot read router config " + file
                            + (at == null || at.getLineNr() < 0
                                    ? ""
                                    : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")")
                            + ": " + withoutSource(e.getMessage()),
                    e);
        } catch (IOException e) {
            throw new IOException("cannot read router config " + file + ": " + e.getMessage(), e);
        }
    }

    /** Jackson's message up to its "at [Source: ...]" line (the known fields of an unknown one stay). */
    private static String withoutSource(String message) {
        int cut = message.indexOf("\n at [Source");
        return cut < 0 ? message : message.substring(0, cut);
    }

    public static RouterConfig parse(String json) throws IOException {
        return JSON.readValue(json, RouterConfig.class);
    }

    /** The flow control this configuration asks for, its defaults filled in. */
    public FlowControl effectiveFlowControl() {
        return flowControl(profile, flowControl);
    }

    private static FlowControl flowControl(String profile, FlowControlConfig given) {
        Duration slotWait = given != null && given.slotWait() != null
                ? given.slotWait()
                : Profiles.PATCHBAY.equals(profile) ? FlowControl.DEFAULT_SLOT_WAIT : Duration.ZERO;
        SaturationDetector d = SaturationDetector.DEFAULT;
        SaturationConfig saturation = given == null ? null : given.saturation();
        SaturationDetector detector = saturation == null
                ? d
                : new SaturationDetector(
                        or(saturation.queueDepthThreshold(), d.queueDepthThreshold()),
                        or(saturation.kvCacheUtilThreshold(), d.kvCacheUtilThreshold()));
        return new FlowControl(slotWait, detector);
    }

    /** The profile {@code profile} names: from the profile file when it has one of that name, else built in. */
    public ProfileDefinition profileDefinition() {
        return definition(profile, profileFile);
    }

    /** A new picker for this configuration's profile and overrides. */
    public EndpointPicker createPicker(RandomGenerator random) {
        return profileDefinition().create(random, System::nanoTime);
    }

    /** The same, its placement plugins reading {@code placement}. */
    public EndpointPicker createPicker(RandomGenerator random, Supplier<Placement> placement) {
        return profileDefinition().create(new PluginContext(random, System::nanoTime, placement));
    }

    private static ProfileDefinition definition(String profile, ProfileFile profileFile) {
        ProfileDefinition own = profileFile == null ? null : profileFile.profile(profile);
        return own != null ? own : Profiles.builtIn(profile);
    }

    private static double or(Double value, double fallback) {
        return value == null ? fallback : value;
    }

    /** Reads a duration as the command line writes it ({@code "500ms"}, {@code "1s"}): {@link DurationOption}. */
    private static final class DurationReader extends StdDeserializer<Duration> {
        DurationReader() {
            super(Duration.class);
        }

        @Override
        public Duration deserialize(JsonParser parser, DeserializationContext context) throws IOException {
            String text = parser.currentToken() == JsonToken.VALUE_STRING ? parser.getText() : null;
            if (text == null) {
                throw JsonMappingException.from(
                        parser,
                        parser.currentName() + " must be a duration with a unit in a string (e.g. \"1s\"), got "
                                + parser.getText());
            }
            try {
                return DurationOption.parse(text);
            } catch (IllegalArgumentException e) {
                throw JsonMappingException.from(parser, parser.currentName() + ": " + e.getMessage(), e);
            }
        }
    }

    /** Reads {@code "profileFile": "path"} into the checked file, relative to the config file's directory. */
    private static final class ProfileFileReader extends StdDeserializer<ProfileFile> {
        ProfileFileReader() {
            super(ProfileFile.class);
        }

        @Override
        public ProfileFile deserialize(JsonParser parser, DeserializationContext context) throws IOException {
            String name = parser.getValueAsString();
            if (name == null || name.isBlank()) {
                throw JsonMappingException.from(parser, "profileFile must be a file name, got " + parser.getText());
            }
            Path path = Path.of(name);
            Object directory = context.getAttribute(BASE_DIRECTORY);
            if (!path.isAbsolute() && directory instanceof Path base) {
                path = base.resolve(path);
            }
            try {
                return ProfileFile.read(path);
            } catch (IllegalArgumentException e) {
                throw JsonMappingException.from(parser, e.getMessage(), e);
            }
        }
    }
}
