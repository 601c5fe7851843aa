package dev.patchbay.router.pick.profile;

import dev.patchbay.router.place.Placement;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * What a plugin may need when a picker is made from a profile: the random source (max-score's ties) and the clock
 * (lora-spread's drains), and the placement the placement plugins read.
 */
public record PluginContext(RandomGenerator random, LongSupplier nanoClock, Supplier<Placement> placement) {
    /** Without a placement controller: placement plugins see {@link Placement#NONE}. */
    public PluginContext(RandomGenerator random, LongSupplier nanoClock) {
        this(random, nanoClock, () -> Placement.NONE);
    }
}
