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
 * The built-in picking profiles, matching the fleet simulator's policies. Each is a profile file (the gateway's
 * {@code EndpointPickerConfig} shape, see {@link ProfileFile}) on the class path at {@link #resourcePath}; the
 * constants below hold the tuned values those files repeat, with the reasons for them:
 * <ul>
 *   <li>{@code round-robin}: no scorers, endpoints in turn;</li>
 *   <li>{@code least-queue}: queue 1;</li>
 *   <li>{@code gie-default}: queue 2, kv-cache 2 (the gateway's default without prefix cache);</li>
 *   <li>{@code gie-lora}: gie-default plus lora-affinity 3 on the legacy gauge only (3 is what the
 *       gateway's default profile gives its affinity scorer, prefix-cache);</li>
 *   <li>{@code llmd-load-state}: gie-default plus lora-load-state {@value #LLMD_LOAD_STATE_WEIGHT} after the
 *       lora-residency filter (llm-d's proposed residency routing, reading {@code vllm:lora_adapter_loaded});</li>
 *   <li>{@code patchbay} (default): queue 2 (with a spread of at least {@value #PATCHBAY_QUEUE_MIN_SPREAD}
 *       requests), kv-cache 2, lora-residency 3, prefill-queue {@value #PATCHBAY_PREFILL_WEIGHT}, lora-bridge
 *       {@value #PATCHBAY_BRIDGE_WEIGHT}, after the lora-spread and lora-capacity filters; it counts its own picks until the next scrape
 *       ({@link EndpointPicker#countsOwnPicks()}), and an adapter request that no endpoint has a slot for waits in
 *       the router for one, up to 1 s ({@link SlotWaitQueue});</li>
 *   <li>{@code patchbay-no-wait}: patchbay without slot wait, to measure what the wait is worth.</li>
 * </ul>
 */
public final class Profiles {
    public static final String ROUND_ROBIN = "round-robin";
    public static final String LEAST_QUEUE = "least-queue";
    public static final String GIE_DEFAULT = "gie-default";
    public static final String GIE_LORA = "gie-lora";
    public static final String LLMD_LOAD_STATE = "llmd-load-state";
    public static final String PATCHBAY = "patchbay";
    public static final String PATCHBAY_NO_WAIT = "patchbay-no-wait";
    public static final String DEFAULT = PATCHBAY;
    public static final List<String> NAMES = List.of(ROUND_ROBIN, LEAST_QUEUE, GIE_DEFAULT, GIE_LORA, LLMD_LOAD_STATE,
            PATCHBAY, PATCHBAY_NO_WAIT);
    /** The peers that route on LoRA: patchbay's targets hold against the best of them. */
    public static final List<String> LORA_PEERS = List.of(GIE_LORA, LLMD_LOAD_STATE);
    /**
     * lora-load-state's weight beside queue 2 and kv-cache 2: the same place the gateway gives its affinity scorer.
     * See docs/router.md for the weights tried.
     */
    public static final double LLMD_LOAD_STATE_WEIGHT = 3.0;
    /**
     * Waiting requests that span patchbay's whole queue score. Its picks count until the next scrape, so within one
     * scrape interval queues grow by one per pick; a smaller spread made it move adapters over single requests
     * (fleet simulator, gie-multilora at 140 req/s: 0.58 s TTFT p99 and 53 loads with 0, 0.25 s and 30 with 4).
     */
    public static final int PATCHBAY_QUEUE_MIN_SPREAD = 4;
    /**
     * prefill-queue's weight. Fleet simulator, gie-multilora at 140 req/s, seeds 1-3: TTFT p99 0.25 s without it,
     * 0.19-0.21 s with it; 0.5 and 1 did no better.
     */
    public static final double PATCHBAY_PREFILL_WEIGHT = 0.75;
    /**
     * lora-bridge's weight. Fleet simulator, gie-multilora at 150 req/s, seed 1: TTFT p99 0.55 s without it, 0.30 s
     * at 0.1, 0.23 s at 0.3 and at 1 (seeds 2 to 5 and zipf unchanged within 0.004 s); enough to decide between
     * otherwise equal endpoints, small beside a queue or a placement difference.
     */
    public static final double PATCHBAY_BRIDGE_WEIGHT = 0.3;

    /** Where the built-in profiles' files are on the class path: {@code RESOURCE_DIR + name + ".json"}. */
    public static final String RESOURCE_DIR = "dev/patchbay/router/pick/profiles/";

    private Profiles() {
    }

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
                        throw new IllegalStateException("built-in profile file " + path + " must define exactly the profile "
                                + name + ", defines " + file.names());
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
        return create(profile, ProfileSettings.DEFAULT, random);
    }

    public static EndpointPicker create(String profile, ProfileSettings settings, RandomGenerator random) {
        return create(profile, settings, random, System::nanoTime);
    }

    /** {@code nanoClock} times the lora-spread filter's drains (the fleet simulator passes its virtual clock). */
    public static EndpointPicker create(String profile, ProfileSettings settings, RandomGenerator random,
                                        LongSupplier nanoClock) {
        return builtIn(profile).create(settings, random, nanoClock);
    }
}
