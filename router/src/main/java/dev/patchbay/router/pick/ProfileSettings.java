package dev.patchbay.router.pick;

import java.util.Map;

/**
 * What a configuration may change in a named profile.
 *
 * @param weights         scorer name to weight; overrides the profile's weight, adds the scorer
 *                        when the profile lacks it, and removes it when 0
 * @param residencyScores the lora-residency scorer's constants
 * @param saturation      thresholds for shedding
 */
public record ProfileSettings(Map<String, Double> weights, ResidencyScores residencyScores,
                              SaturationDetector saturation) {
    public static final ProfileSettings DEFAULT =
            new ProfileSettings(Map.of(), ResidencyScores.DEFAULT, SaturationDetector.DEFAULT);

    public ProfileSettings {
        weights = Map.copyOf(weights);
    }
}
