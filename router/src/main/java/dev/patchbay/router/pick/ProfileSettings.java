package dev.patchbay.router.pick;

import java.util.Map;

/**
 * What a configuration may change in a profile, on top of what its profile file says.
 *
 * @param weights         scorer name ({@link Scorer#name()}) to weight; overrides the profile's weight, adds the
 *                        scorer (with its default parameters) when the profile lacks it, and removes it when 0
 * @param residencyScores the lora-residency scorer's constants in place of the profile's; null keeps the
 *                        profile's (for the built-in profiles, {@link ResidencyScores#DEFAULT})
 * @param saturation      thresholds for shedding
 */
public record ProfileSettings(Map<String, Double> weights, ResidencyScores residencyScores,
                              SaturationDetector saturation) {
    public static final ProfileSettings DEFAULT =
            new ProfileSettings(Map.of(), null, SaturationDetector.DEFAULT);

    public ProfileSettings {
        weights = Map.copyOf(weights);
    }
}
