package dev.patchbay.router.pick.profile;

import dev.patchbay.router.pick.ProfileSettings;

import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * What a plugin may need when a picker is made from a profile: the configuration's overrides (the lora-residency
 * scorer's scores), the random source (max-score's ties) and the clock (lora-spread's drains).
 */
public record PluginContext(ProfileSettings settings, RandomGenerator random, LongSupplier nanoClock) {
}
