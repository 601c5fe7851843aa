package dev.patchbay.router.pick.profile;

import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * What a plugin may need when a picker is made from a profile: the random source (max-score's ties) and the clock
 * (lora-spread's drains).
 */
public record PluginContext(RandomGenerator random, LongSupplier nanoClock) {}
