package dev.patchbay.router.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import dev.patchbay.router.DurationOption;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.ProfileSettings;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.pick.ResidencyScores;
import dev.patchbay.router.pick.SaturationDetector;
import dev.patchbay.router.pick.profile.ProfileDefinition;
import dev.patchbay.router.pick.profile.ProfileFile;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * The router's configuration file (JSON). Every field is optional:
 * <pre>
 * {
 *   "profile": "patchbay",
 *   "profileFile": "profiles.json",
 *   "weights": {"queue": 2, "kv-cache": 2, "lora-residency": 3},
 *   "residencyScores": {"inSlot": 1.0, "inHost": 0.7, "freeSlot": 0.6, "idleSlot": 0.3, "allSlotsBusy": 0.0},
 *   "saturation": {"queueThreshold": 5, "kvCacheThreshold": 0.8},
 *   "baseModels": ["llama-3-8b"],
 *   "adapters": ["sql-v1", "sql-v2"],
 *   "rewrites": [{"model": "sql", "targets": [{"model": "sql-v1", "weight": 90}, {"model": "sql-v2", "weight": 10}]}],
 *   "objectives": {"batch": -1},
 *   "seed": 42,
 *   "servedModelsInterval": "1s"
 * }
 * </pre>
 * {@code profileFile} is a profile file ({@link ProfileFile}) whose profiles {@code profile} may name besides the
 * built-in ones; a relative path is taken from the directory of the config file ({@link #read}) or the working
 * directory ({@link #parse}). Without {@code profile}, a profile file's only profile is used (a file with several
 * needs {@code profile}). The file is read and checked with the config.
 * {@code adapters}, when given, is the complete list of servable adapters: other names get 400.
 * {@code objectives} maps an {@code x-gateway-inference-objective} header value to a priority;
 * a negative priority makes the request sheddable.
 * {@code servedModelsInterval} is how often each server's {@code /v1/models} is read, a duration with a unit as on the
 * command line ({@code "0s"} reads none); {@code route --served-models-interval} wins over it.
 */
public record RouterConfig(String profile,
                           ProfileFile profileFile,
                           Map<String, Double> weights,
                           Residency residencyScores,
                           Saturation saturation,
                           List<String> baseModels,
                           List<String> adapters,
                           List<ModelRewrite> rewrites,
                           Map<String, Integer> objectives,
                           Long seed,
                           Duration servedModelsInterval) {

    public static final RouterConfig DEFAULT =
            new RouterConfig(null, null, null, null, null, null, null, null, null, null, null);

    /** The directory a relative {@code profileFile} is taken from, as a deserialization attribute. */
    private static final String BASE_DIRECTORY = "patchbay.configDirectory";

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .registerModule(new SimpleModule().addDeserializer(ProfileFile.class, new ProfileFileReader())
                    .addDeserializer(Duration.class, new DurationReader()));

    /** Overrides of the residency scores; missing ones keep their default. */
    public record Residency(Double inSlot, Double inHost, Double freeSlot, Double idleSlot, Double allSlotsBusy) {
        ResidencyScores resolve() {
            ResidencyScores d = ResidencyScores.DEFAULT;
            return new ResidencyScores(or(inSlot, d.inSlot()), or(inHost, d.inHost()), or(freeSlot, d.freeSlot()),
                    or(idleSlot, d.idleSlot()), or(allSlotsBusy, d.allSlotsBusy()));
        }
    }

    /** Overrides of the saturation thresholds. */
    public record Saturation(Double queueThreshold, Double kvCacheThreshold) {
        SaturationDetector resolve() {
            SaturationDetector d = SaturationDetector.DEFAULT;
            return new SaturationDetector(or(queueThreshold, d.queueThreshold()),
                    or(kvCacheThreshold, d.kvCacheThreshold()));
        }
    }

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
                throw new IllegalArgumentException("profile file " + profileFile.source() + " defines several profiles ("
                        + String.join(", ", profileFile.names()) + "): name one in \"profile\"");
            }
        }
        profile = profile != null ? profile : profileFile != null ? profileFile.names().getFirst() : Profiles.DEFAULT;
        if (!Profiles.NAMES.contains(profile) && (profileFile == null || profileFile.profile(profile) == null)) {
            List<String> known = new ArrayList<>(Profiles.NAMES);
            if (profileFile != null) {
                known.addAll(profileFile.names());
            }
            throw new IllegalArgumentException("unknown profile '" + profile + "'; known: " + String.join(", ", known)
                    + (profileFile == null ? "" : " (built-in and from " + profileFile.source() + ")"));
        }
        weights = weights == null ? Map.of() : Map.copyOf(weights);
        baseModels = baseModels == null ? List.of() : List.copyOf(baseModels);
        adapters = adapters == null ? null : List.copyOf(adapters);
        rewrites = rewrites == null ? List.of() : List.copyOf(rewrites);
        objectives = objectives == null ? Map.of() : Map.copyOf(objectives);
        // Build the picker once so that a bad weight or score fails when the file is read.
        definition(profile, profileFile).create(settings(weights, residencyScores, saturation), new java.util.Random(0),
                System::nanoTime);
    }

    public static RouterConfig read(Path file) throws IOException {
        try {
            Path directory = file.toAbsolutePath().getParent();
            return JSON.readerFor(RouterConfig.class).withAttribute(BASE_DIRECTORY, directory).readValue(file.toFile());
        } catch (JsonProcessingException e) {
            // Jackson's own message ends in a source and reference chain; the line and column say where more briefly.
            var at = e.getLocation();
            throw new IOException("cannot read router config " + file
                    + (at == null || at.getLineNr() < 0 ? "" : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")")
                    + ": " + withoutSource(e.getMessage()), e);
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

    public ProfileSettings profileSettings() {
        return settings(weights, residencyScores, saturation);
    }

    /** The profile {@code profile} names: from the profile file when it has one of that name, else built in. */
    public ProfileDefinition profileDefinition() {
        return definition(profile, profileFile);
    }

    /** A new picker for this configuration's profile and overrides. */
    public EndpointPicker createPicker(RandomGenerator random) {
        return profileDefinition().create(profileSettings(), random, System::nanoTime);
    }

    private static ProfileDefinition definition(String profile, ProfileFile profileFile) {
        ProfileDefinition own = profileFile == null ? null : profileFile.profile(profile);
        return own != null ? own : Profiles.builtIn(profile);
    }

    private static ProfileSettings settings(Map<String, Double> weights, Residency residencyScores,
                                            Saturation saturation) {
        // Without residencyScores here the profile's own scores hold (null), else these replace them.
        return new ProfileSettings(weights,
                residencyScores == null ? null : residencyScores.resolve(),
                saturation == null ? SaturationDetector.DEFAULT : saturation.resolve());
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
            String text = parser.currentToken() == com.fasterxml.jackson.core.JsonToken.VALUE_STRING
                    ? parser.getText() : null;
            if (text == null) {
                throw JsonMappingException.from(parser, parser.currentName()
                        + " must be a duration with a unit in a string (e.g. \"1s\"), got " + parser.getText());
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
