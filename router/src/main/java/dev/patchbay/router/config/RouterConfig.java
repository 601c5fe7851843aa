package dev.patchbay.router.config;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.router.pick.ProfileSettings;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.pick.ResidencyScores;
import dev.patchbay.router.pick.SaturationDetector;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The router's configuration file (JSON). Every field is optional:
 * <pre>
 * {
 *   "profile": "patchbay",
 *   "weights": {"queue": 2, "kv-cache": 2, "lora-residency": 3},
 *   "residencyScores": {"inSlot": 1.0, "inHost": 0.7, "freeSlot": 0.6, "idleSlot": 0.3, "allSlotsBusy": 0.0},
 *   "saturation": {"queueThreshold": 5, "kvCacheThreshold": 0.8},
 *   "baseModels": ["llama-3-8b"],
 *   "adapters": ["sql-v1", "sql-v2"],
 *   "rewrites": [{"model": "sql", "targets": [{"model": "sql-v1", "weight": 90}, {"model": "sql-v2", "weight": 10}]}],
 *   "objectives": {"batch": -1},
 *   "seed": 42
 * }
 * </pre>
 * {@code adapters}, when given, is the complete list of servable adapters: other names get 400.
 * {@code objectives} maps an {@code x-gateway-inference-objective} header value to a priority;
 * a negative priority makes the request sheddable.
 */
public record RouterConfig(String profile,
                           Map<String, Double> weights,
                           Residency residencyScores,
                           Saturation saturation,
                           List<String> baseModels,
                           List<String> adapters,
                           List<ModelRewrite> rewrites,
                           Map<String, Integer> objectives,
                           Long seed) {

    public static final RouterConfig DEFAULT = new RouterConfig(null, null, null, null, null, null, null, null, null);

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

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
        profile = profile == null ? Profiles.DEFAULT : profile;
        if (!Profiles.NAMES.contains(profile)) {
            throw new IllegalArgumentException("unknown profile '" + profile + "'; known: "
                    + String.join(", ", Profiles.NAMES));
        }
        weights = weights == null ? Map.of() : Map.copyOf(weights);
        baseModels = baseModels == null ? List.of() : List.copyOf(baseModels);
        adapters = adapters == null ? null : List.copyOf(adapters);
        rewrites = rewrites == null ? List.of() : List.copyOf(rewrites);
        objectives = objectives == null ? Map.of() : Map.copyOf(objectives);
        // Build the picker once so that a bad weight or score fails when the file is read.
        Profiles.create(profile, settings(weights, residencyScores, saturation), new java.util.Random(0));
    }

    public static RouterConfig read(Path file) throws IOException {
        try {
            return JSON.readValue(file.toFile(), RouterConfig.class);
        } catch (IOException e) {
            throw new IOException("cannot read router config " + file + ": " + e.getMessage(), e);
        }
    }

    public static RouterConfig parse(String json) throws IOException {
        return JSON.readValue(json, RouterConfig.class);
    }

    public ProfileSettings profileSettings() {
        return settings(weights, residencyScores, saturation);
    }

    private static ProfileSettings settings(Map<String, Double> weights, Residency residencyScores,
                                            Saturation saturation) {
        return new ProfileSettings(weights,
                residencyScores == null ? ResidencyScores.DEFAULT : residencyScores.resolve(),
                saturation == null ? SaturationDetector.DEFAULT : saturation.resolve());
    }

    private static double or(Double value, double fallback) {
        return value == null ? fallback : value;
    }
}
