package dev.patchbay.bench.sim;

import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.flow.FlowControl;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.pick.profile.ProfileDefinition;
import dev.patchbay.router.pick.profile.ProfileFile;
import dev.patchbay.router.place.DynamoPlacement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A routing policy of the simulator: a profile, the flow control the router runs it with, and the placement algorithm
 * its controller runs (null: none), resolved as the router resolves its configuration ({@link RouterConfig}): a
 * built-in profile's name, or one of a profile file's, each with the router's default flow control for it (slot wait
 * with {@code patchbay} and a profile file's profiles, which are variants of it to try, none with the others), and the
 * router's default placement (off). More names:
 * {@value #PATCHBAY_NO_WAIT}, patchbay without slot wait; {@value #PATCHBAY_PLACEMENT}, patchbay with placement on;
 * {@value #DYNAMO_HRW} and {@value #DYNAMO_MCF}, NVIDIA Dynamo's LoRA routing over its placement in either mode.
 */
public record SimPolicy(String name, ProfileDefinition profile, FlowControl flowControl, String placement) {
    public static final String PATCHBAY_NO_WAIT = "patchbay-no-wait";
    public static final String PATCHBAY_PLACEMENT = "patchbay-placement";
    public static final String DYNAMO_HRW = DynamoPlacement.HRW_NAME;
    public static final String DYNAMO_MCF = DynamoPlacement.MCF_NAME;

    /** Every policy name {@code profileFile} (or null) makes known. */
    public static List<String> names(ProfileFile profileFile) {
        List<String> names = new ArrayList<>(Profiles.NAMES);
        names.add(PATCHBAY_NO_WAIT);
        names.add(PATCHBAY_PLACEMENT);
        names.add(DYNAMO_HRW);
        names.add(DYNAMO_MCF);
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
        return switch (name) {
            case PATCHBAY_NO_WAIT -> {
                RouterConfig config = new RouterConfig(
                        Profiles.PATCHBAY,
                        null,
                        new RouterConfig.FlowControlConfig(Duration.ZERO, null),
                        null,
                        null,
                        null,
                        null,
                        null,
                        null);
                yield new SimPolicy(name, config.profileDefinition(), config.effectiveFlowControl(), placement(config));
            }
            case PATCHBAY_PLACEMENT -> {
                RouterConfig config = builtIn(Profiles.PATCHBAY).withPlacementOn(true);
                yield new SimPolicy(name, config.profileDefinition(), config.effectiveFlowControl(), placement(config));
            }
            case DYNAMO_HRW, DYNAMO_MCF -> {
                RouterConfig config = builtIn(Profiles.DYNAMO_PLACEMENT);
                yield new SimPolicy(name, config.profileDefinition(), config.effectiveFlowControl(), name);
            }
            default -> {
                boolean own = profileFile != null && profileFile.profile(name) != null;
                // A profile file's profiles are variants of patchbay's to try: they get its slot wait.
                RouterConfig.FlowControlConfig flow =
                        own ? new RouterConfig.FlowControlConfig(FlowControl.DEFAULT_SLOT_WAIT, null) : null;
                RouterConfig config =
                        new RouterConfig(name, own ? profileFile : null, flow, null, null, null, null, null, null);
                String placement = placement(config);
                yield new SimPolicy(name, config.profileDefinition(), config.effectiveFlowControl(), placement);
            }
        };
    }

    private static RouterConfig builtIn(String profile) {
        return new RouterConfig(profile, null, null, null, null, null, null, null, null);
    }

    private static String placement(RouterConfig config) {
        RouterConfig.PlacementConfig p = config.effectivePlacement();
        return p.on() ? p.algorithmName() : null;
    }

    /** The controller's algorithm, for the policies that place. */
    public boolean places() {
        return placement != null;
    }
}
