package dev.patchbay.router.pick;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * The named picking profiles, matching the fleet simulator's policies:
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
 *       ({@link EndpointPicker#countsOwnPicks()}).</li>
 * </ul>
 */
public final class Profiles {
    public static final String ROUND_ROBIN = "round-robin";
    public static final String LEAST_QUEUE = "least-queue";
    public static final String GIE_DEFAULT = "gie-default";
    public static final String GIE_LORA = "gie-lora";
    public static final String LLMD_LOAD_STATE = "llmd-load-state";
    public static final String PATCHBAY = "patchbay";
    public static final String DEFAULT = PATCHBAY;
    public static final List<String> NAMES = List.of(ROUND_ROBIN, LEAST_QUEUE, GIE_DEFAULT, GIE_LORA, LLMD_LOAD_STATE,
            PATCHBAY);
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

    private Profiles() {
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
        Map<String, Double> weights = new LinkedHashMap<>();
        List<Filter> filters = new ArrayList<>();
        Picker picker = new MaxScorePicker(random);
        // A profile's own setting of a named scorer; names not here get the default one (scorer(name, settings)).
        Map<String, Scorer> ownScorers = new HashMap<>();
        boolean countsOwnPicks = false;
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
            case LLMD_LOAD_STATE -> {
                weights.put(QueueScorer.NAME, 2.0);
                weights.put(KvCacheScorer.NAME, 2.0);
                weights.put(LoraLoadStateScorer.NAME, LLMD_LOAD_STATE_WEIGHT);
                filters.add(new LoraResidencyFilter());
            }
            case PATCHBAY -> {
                weights.put(QueueScorer.NAME, 2.0);
                ownScorers.put(QueueScorer.NAME, new QueueScorer(PATCHBAY_QUEUE_MIN_SPREAD));
                weights.put(KvCacheScorer.NAME, 2.0);
                weights.put(LoraResidencyScorer.NAME, 3.0);
                weights.put(PrefillQueueScorer.NAME, PATCHBAY_PREFILL_WEIGHT);
                weights.put(LoraBridgeScorer.NAME, PATCHBAY_BRIDGE_WEIGHT);
                filters.add(new LoraSpreadFilter(nanoClock));
                filters.add(new LoraCapacityFilter());
                countsOwnPicks = true;
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
                Scorer scorer = ownScorers.containsKey(entry.getKey()) ? ownScorers.get(entry.getKey())
                        : scorer(entry.getKey(), settings);
                scorers.add(new WeightedScorer(scorer, weight));
            }
        }
        return new EndpointPicker(profile, filters, scorers, picker, settings.saturation(), countsOwnPicks);
    }

    /** The scorer of that name. */
    public static Scorer scorer(String name, ProfileSettings settings) {
        return switch (name) {
            case QueueScorer.NAME -> new QueueScorer();
            case KvCacheScorer.NAME -> new KvCacheScorer();
            case LoraAffinityScorer.NAME -> new LoraAffinityScorer();
            case LoraResidencyScorer.NAME -> new LoraResidencyScorer(settings.residencyScores());
            case PrefillQueueScorer.NAME -> new PrefillQueueScorer();
            case LoraBridgeScorer.NAME -> new LoraBridgeScorer();
            case LoraLoadStateScorer.NAME -> new LoraLoadStateScorer();
            default -> throw new IllegalArgumentException("unknown scorer '" + name + "'; known: "
                    + String.join(", ", QueueScorer.NAME, KvCacheScorer.NAME, LoraAffinityScorer.NAME,
                    LoraResidencyScorer.NAME, PrefillQueueScorer.NAME, LoraBridgeScorer.NAME, LoraLoadStateScorer.NAME));
        };
    }
}
