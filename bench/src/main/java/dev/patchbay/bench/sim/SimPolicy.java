package dev.patchbay.bench.sim;

import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.flow.FlowControl;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.pick.profile.ProfileDefinition;
import dev.patchbay.router.pick.profile.ProfileFile;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A routing policy of the simulator: a profile and the flow control the router runs it with, resolved as the router
 * resolves its configuration ({@link RouterConfig}): a built-in profile's name, or one of a profile file's, each with
 * the router's default flow control for it (slot wait with {@code patchbay}, none with the others). One name more:
 * {@value #PATCHBAY_NO_WAIT}, patchbay without slot wait, to measure what the wait is worth.
 */
public record SimPolicy(String name, ProfileDefinition profile, FlowControl flowControl) {
    public static final String PATCHBAY_NO_WAIT = "patchbay-no-wait";

    /** Every policy name {@code profileFile} (or null) makes known. */
    public static List<String> names(ProfileFile profileFile) {
        List<String> names = new ArrayList<>(Profiles.NAMES);
        names.add(PATCHBAY_NO_WAIT);
        if (profileFile != null) {
            names.addAll(profileFile.names());
        }
        return names;
    }

    /** Throws IllegalArgumentException, naming the known policies, unless {@code name} is one. */
    public static void check(String name, ProfileFile profileFile) {
        if (!names(profileFile).contains(name)) {
            throw new IllegalArgumentException(
                    "unknown policy '" + name + "'; known: " + String.join(", ", names(profileFile)));
        }
    }

    /** The policy {@code name}; {@code profileFile} (or null) holds profiles of one's own. */
    public static SimPolicy of(String name, ProfileFile profileFile) {
        RouterConfig config;
        if (name.equals(PATCHBAY_NO_WAIT)) {
            config = new RouterConfig(
                    Profiles.PATCHBAY,
                    null,
                    new RouterConfig.FlowControlConfig(Duration.ZERO, null),
                    null,
                    null,
                    null,
                    null,
                    null,
                    null);
        } else {
            boolean own = profileFile != null && profileFile.profile(name) != null;
            config = new RouterConfig(name, own ? profileFile : null, null, null, null, null, null, null, null);
        }
        return new SimPolicy(name, config.profileDefinition(), config.effectiveFlowControl());
    }
}
