package dev.patchbay.router.pick;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * The profiles as they were hand-built before they became files (Profiles.create at commit 306d062), kept as the
 * reference the built-in profile files must match. One change: ProfileSettings.residencyScores may now be null,
 * meaning the defaults, which is what every caller passed before.
 */
final class ReferenceProfiles {
    private ReferenceProfiles() {
    }

    static EndpointPicker create(String profile, ProfileSettings settings, RandomGenerator random,
                                 LongSupplier nanoClock) {
        Map<String, Double> weights = new LinkedHashMap<>();
        List<Filter> filters = new ArrayList<>();
        Picker picker = new MaxScorePicker(random);
        Map<String, Scorer> ownScorers = new HashMap<>();
        boolean countsOwnPicks = false;
        long slotWaitNanos = 0;
        switch (profile) {
            case Profiles.ROUND_ROBIN -> picker = new RoundRobinPicker();
            case Profiles.LEAST_QUEUE -> weights.put(QueueScorer.NAME, 1.0);
            case Profiles.GIE_DEFAULT -> {
                weights.put(QueueScorer.NAME, 2.0);
                weights.put(KvCacheScorer.NAME, 2.0);
            }
            case Profiles.GIE_LORA -> {
                weights.put(QueueScorer.NAME, 2.0);
                weights.put(KvCacheScorer.NAME, 2.0);
                weights.put(LoraAffinityScorer.NAME, 3.0);
            }
            case Profiles.LLMD_LOAD_STATE -> {
                weights.put(QueueScorer.NAME, 2.0);
                weights.put(KvCacheScorer.NAME, 2.0);
                weights.put(LoraLoadStateScorer.NAME, Profiles.LLMD_LOAD_STATE_WEIGHT);
                filters.add(new LoraResidencyFilter());
            }
            case Profiles.PATCHBAY, Profiles.PATCHBAY_NO_WAIT -> {
                weights.put(QueueScorer.NAME, 2.0);
                ownScorers.put(QueueScorer.NAME, new QueueScorer(Profiles.PATCHBAY_QUEUE_MIN_SPREAD, false));
                weights.put(KvCacheScorer.NAME, 2.0);
                weights.put(LoraResidencyScorer.NAME, 3.0);
                weights.put(PrefillQueueScorer.NAME, Profiles.PATCHBAY_PREFILL_WEIGHT);
                weights.put(LoraBridgeScorer.NAME, Profiles.PATCHBAY_BRIDGE_WEIGHT);
                filters.add(new LoraSpreadFilter(nanoClock));
                filters.add(new LoraCapacityFilter());
                countsOwnPicks = true;
                if (profile.equals(Profiles.PATCHBAY)) {
                    slotWaitNanos = 1_000_000_000L;
                }
            }
            default -> throw new IllegalArgumentException("unknown profile '" + profile + "'");
        }
        weights.putAll(settings.weights());
        List<WeightedScorer> scorers = new ArrayList<>();
        for (Map.Entry<String, Double> entry : weights.entrySet()) {
            double weight = entry.getValue();
            if (!Double.isFinite(weight) || weight < 0) {
                throw new IllegalArgumentException("weight of " + entry.getKey() + " must be >= 0, got " + weight);
            }
            if (weight > 0) {
                Scorer scorer = ownScorers.containsKey(entry.getKey()) ? ownScorers.get(entry.getKey())
                        : scorer(entry.getKey(), settings);
                scorers.add(new WeightedScorer(scorer, weight));
            }
        }
        return new EndpointPicker(profile, filters, scorers, picker, settings.saturation(), countsOwnPicks,
                slotWaitNanos);
    }

    private static Scorer scorer(String name, ProfileSettings settings) {
        ResidencyScores scores = settings.residencyScores() == null ? ResidencyScores.DEFAULT : settings.residencyScores();
        return switch (name) {
            case QueueScorer.NAME -> new QueueScorer();
            case KvCacheScorer.NAME -> new KvCacheScorer();
            case LoraAffinityScorer.NAME -> new LoraAffinityScorer();
            case LoraResidencyScorer.NAME -> new LoraResidencyScorer(scores);
            case PrefillQueueScorer.NAME -> new PrefillQueueScorer();
            case LoraBridgeScorer.NAME -> new LoraBridgeScorer();
            case LoraLoadStateScorer.NAME -> new LoraLoadStateScorer();
            default -> throw new IllegalArgumentException("unknown scorer '" + name + "'");
        };
    }
}
