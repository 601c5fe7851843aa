package dev.patchbay.router.pick;

import dev.patchbay.router.pick.profile.ProfileDefinition;
import dev.patchbay.router.pick.profile.ProfileFile;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * The built-in picking profiles: each a profile file (the gateway's {@code EndpointPickerConfig} shape, see
 * {@link ProfileFile}) on the class path at {@link #resourcePath}, where its plugins, parameters and weights are
 * declared, with the reasons for them. {@code docs/profiles.md} says which to use when.
 */
public final class Profiles {
    public static final String ROUND_ROBIN = "round-robin";
    public static final String LEAST_QUEUE = "least-queue";
    public static final String GIE_DEFAULT = "gie-default";
    public static final String GIE_LORA = "gie-lora";
    public static final String LLMD_LOAD_STATE = "llmd-load-state";
    public static final String PATCHBAY = "patchbay";
    /** NVIDIA Dynamo's LoRA routing; meant to run with a Dynamo placement algorithm. */
    public static final String DYNAMO_PLACEMENT = "dynamo-placement";

    public static final String DEFAULT = PATCHBAY;
    public static final List<String> NAMES =
            List.of(ROUND_ROBIN, LEAST_QUEUE, GIE_DEFAULT, GIE_LORA, LLMD_LOAD_STATE, PATCHBAY, DYNAMO_PLACEMENT);
    /** The peers that route on LoRA: patchbay's targets hold against the best of them. */
    public static final List<String> LORA_PEERS = List.of(GIE_LORA, LLMD_LOAD_STATE);

    /** Where the built-in profiles' files are on the class path: {@code RESOURCE_DIR + name + ".json"}. */
    public static final String RESOURCE_DIR = "dev/patchbay/router/pick/profiles/";

    private Profiles() {}

    /** Read once, on first use: a built-in file that does not load is a broken build, so it fails loudly. */
    private static final class BuiltIn {
        static final Map<String, ProfileDefinition> PROFILES = load();

        private static Map<String, ProfileDefinition> load() {
            Map<String, ProfileDefinition> profiles = new LinkedHashMap<>();
            for (String name : NAMES) {
                String path = resourcePath(name);
                try (InputStream in = Profiles.class.getClassLoader().getResourceAsStream(path)) {
                    if (in == null) {
                        throw new IllegalStateException("built-in profile file " + path + " is missing");
                    }
                    ProfileFile file = ProfileFile.parse(path, new String(in.readAllBytes(), StandardCharsets.UTF_8));
                    if (!file.names().equals(List.of(name))) {
                        throw new IllegalStateException("built-in profile file " + path
                                + " must define exactly the profile " + name + ", defines " + file.names());
                    }
                    profiles.put(name, file.profile(name));
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read built-in profile file " + path, e);
                }
            }
            return profiles;
        }
    }

    /** The class-path resource holding the built-in profile {@code name}. */
    public static String resourcePath(String name) {
        return RESOURCE_DIR + name + ".json";
    }

    /** The built-in profile of that name, as read from its file. */
    public static ProfileDefinition builtIn(String profile) {
        ProfileDefinition definition = BuiltIn.PROFILES.get(profile);
        if (definition == null) {
            throw new IllegalArgumentException("unknown profile '" + profile + "'; known: " + String.join(", ", NAMES));
        }
        return definition;
    }

    public static EndpointPicker create(String profile, RandomGenerator random) {
        return create(profile, random, System::nanoTime);
    }

    /** {@code nanoClock} times the lora-spread filter's drains (the fleet simulator passes its virtual clock). */
    public static EndpointPicker create(String profile, RandomGenerator random, LongSupplier nanoClock) {
        return builtIn(profile).create(random, nanoClock);
    }
}
