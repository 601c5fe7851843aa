package dev.patchbay.router.pick;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * The named picking profiles, matching the fleet simulator's policies:
 * <ul>
 *   <li>{@code round-robin}: no scorers, endpoints in turn;</li>
 *   <li>{@code least-queue}: queue 1;</li>
 *   <li>{@code gie-default}: queue 2, kv-cache 2 (the gateway's default without prefix cache);</li>
 *   <li>{@code gie-lora}: gie-default plus lora-affinity 3 on the legacy gauge only (3 is what the
 *       gateway's default profile gives its affinity scorer, prefix-cache);</li>
 *   <li>{@code patchbay} (default): queue 2, kv-cache 2, lora-residency 3, after the
 *       lora-capacity filter.</li>
 * </ul>
 */
public final class Profiles {
    public static final String ROUND_ROBIN = "round-robin";
    public static final String LEAST_QUEUE = "least-queue";
    public static final String GIE_DEFAULT = "gie-default";
    public static final String GIE_LORA = "gie-lora";
    public static final String PATCHBAY = "patchbay";
    public static final String DEFAULT = PATCHBAY;
    public static final List<String> NAMES = List.of(ROUND_ROBIN, LEAST_QUEUE, GIE_DEFAULT, GIE_LORA, PATCHBAY);

    private Profiles() {
    }

    public static EndpointPicker create(String profile, RandomGenerator random) {
        return create(profile, ProfileSettings.DEFAULT, random);
    }

    public static EndpointPicker create(String profile, ProfileSettings settings, RandomGenerator random) {
        Map<String, Double> weights = new LinkedHashMap<>();
        List<Filter> filters = new ArrayList<>();
        Picker picker = new MaxScorePicker(random);
        switch (profile) {
            case ROUND_ROBIN -> picker = new RoundRobinPicker();
            case LEAST_QUEUE -> weights.put(QueueScorer.NAME, 1.0);
            case GIE_DEFAULT -> {
                weights.put(QueueScorer.NAME, 2.0);
                weights.put(KvCacheScorer.NAME, 2.0);
            }
            case GIE_LORA -> {
                weights.put(QueueScorer.NAME, 2.0);
                weights.put(KvCacheScorer.NAME, 2.0);
                weights.put(LoraAffinityScorer.NAME, 3.0);
            }
            case PATCHBAY -> {
                weights.put(QueueScorer.NAME, 2.0);
                weights.put(KvCacheScorer.NAME, 2.0);
                weights.put(LoraResidencyScorer.NAME, 3.0);
                filters.add(new LoraCapacityFilter());
            }
            default -> throw new IllegalArgumentException(
                    "unknown profile '" + profile + "'; known: " + String.join(", ", NAMES));
        }
        weights.putAll(settings.weights());
        List<WeightedScorer> scorers = new ArrayList<>();
        for (Map.Entry<String, Double> entry : weights.entrySet()) {
            double weight = entry.getValue();
            if (!Double.isFinite(weight) || weight < 0) {
                throw new IllegalArgumentException("weight of " + entry.getKey() + " must be >= 0, got " + weight);
            }
            if (weight > 0) {
                scorers.add(new WeightedScorer(scorer(entry.getKey(), settings), weight));
            }
        }
        return new EndpointPicker(profile, filters, scorers, picker, settings.saturation());
    }

    /** The scorer of that name. */
    public static Scorer scorer(String name, ProfileSettings settings) {
        return switch (name) {
            case QueueScorer.NAME -> new QueueScorer();
            case KvCacheScorer.NAME -> new KvCacheScorer();
            case LoraAffinityScorer.NAME -> new LoraAffinityScorer();
            case LoraResidencyScorer.NAME -> new LoraResidencyScorer(settings.residencyScores());
            default -> throw new IllegalArgumentException("unknown scorer '" + name + "'; known: "
                    + String.join(", ", QueueScorer.NAME, KvCacheScorer.NAME, LoraAffinityScorer.NAME,
                    LoraResidencyScorer.NAME));
        };
    }
}
