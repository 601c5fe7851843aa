package dev.patchbay.router.pick.profile;

import dev.patchbay.router.pick.KvCacheScorer;
import dev.patchbay.router.pick.LoraAffinityScorer;
import dev.patchbay.router.pick.LoraBridgeScorer;
import dev.patchbay.router.pick.LoraCapacityFilter;
import dev.patchbay.router.pick.LoraLoadStateScorer;
import dev.patchbay.router.pick.LoraResidencyFilter;
import dev.patchbay.router.pick.LoraResidencyScorer;
import dev.patchbay.router.pick.LoraSpreadFilter;
import dev.patchbay.router.pick.MaxScorePicker;
import dev.patchbay.router.pick.OwnPicksCounter;
import dev.patchbay.router.pick.PrefillQueueScorer;
import dev.patchbay.router.pick.QueueScorer;
import dev.patchbay.router.pick.RendezvousScorer;
import dev.patchbay.router.pick.ResidencyScores;
import dev.patchbay.router.pick.RoundRobinPicker;
import dev.patchbay.router.pick.profile.Plugin.FilterPlugin;
import dev.patchbay.router.pick.profile.Plugin.PickerPlugin;
import dev.patchbay.router.pick.profile.Plugin.PreRequestPlugin;
import dev.patchbay.router.pick.profile.Plugin.ScorerPlugin;
import dev.patchbay.router.place.PlacementFilter;
import dev.patchbay.router.place.PlacementScorer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every plugin type a profile file may name, each mapped to its constructor by hand: the list below is the whole
 * registry, so what a type takes is read here, not found by reflection. Types are the component's name plus its kind
 * ({@code queue} scorer: {@code queue-scorer}), as the gateway names its plugins.
 */
public final class PluginTypes {
    public static final String QUEUE_SCORER = QueueScorer.NAME + "-scorer";
    public static final String KV_CACHE_SCORER = KvCacheScorer.NAME + "-scorer";
    public static final String LORA_AFFINITY_SCORER = LoraAffinityScorer.NAME + "-scorer";
    public static final String LORA_RESIDENCY_SCORER = LoraResidencyScorer.NAME + "-scorer";
    public static final String PREFILL_QUEUE_SCORER = PrefillQueueScorer.NAME + "-scorer";
    public static final String LORA_BRIDGE_SCORER = LoraBridgeScorer.NAME + "-scorer";
    public static final String LORA_LOAD_STATE_SCORER = LoraLoadStateScorer.NAME + "-scorer";
    public static final String LORA_SPREAD_FILTER = LoraSpreadFilter.NAME + "-filter";
    public static final String LORA_CAPACITY_FILTER = LoraCapacityFilter.NAME + "-filter";
    public static final String LORA_RESIDENCY_FILTER = LoraResidencyFilter.NAME + "-filter";
    public static final String MAX_SCORE_PICKER = MaxScorePicker.NAME + "-picker";
    public static final String ROUND_ROBIN_PICKER = RoundRobinPicker.NAME + "-picker";
    public static final String OWN_PICKS_COUNTER = OwnPicksCounter.NAME;
    public static final String PLACEMENT_SCORER = PlacementScorer.NAME + "-scorer";
    public static final String RENDEZVOUS_SCORER = RendezvousScorer.NAME + "-scorer";
    public static final String PLACEMENT_FILTER = PlacementFilter.NAME + "-filter";

    private static final Map<String, PluginType> TYPES = index(List.of(
            new PluginType(QUEUE_SCORER, List.of("minSpread", "slotTurnover"), p -> {
                int minSpread = p.integer("minSpread", 0, 0);
                boolean slotTurnover = p.bool("slotTurnover", false);
                return new ScorerPlugin(QUEUE_SCORER, QueueScorer.NAME, c -> new QueueScorer(minSpread, slotTurnover));
            }),
            new PluginType(
                    KV_CACHE_SCORER,
                    List.of(),
                    p -> new ScorerPlugin(KV_CACHE_SCORER, KvCacheScorer.NAME, c -> new KvCacheScorer())),
            new PluginType(LORA_AFFINITY_SCORER, List.of("distinctAdapters"), p -> {
                boolean distinctAdapters = p.bool("distinctAdapters", false);
                return new ScorerPlugin(
                        LORA_AFFINITY_SCORER, LoraAffinityScorer.NAME, c -> new LoraAffinityScorer(distinctAdapters));
            }),
            new PluginType(
                    LORA_RESIDENCY_SCORER, List.of("inSlot", "inHost", "freeSlot", "idleSlot", "allSlotsBusy"), p -> {
                        ResidencyScores d = ResidencyScores.DEFAULT;
                        ResidencyScores own = new ResidencyScores(
                                p.number("inSlot", d.inSlot()),
                                p.number("inHost", d.inHost()),
                                p.number("freeSlot", d.freeSlot()),
                                p.number("idleSlot", d.idleSlot()),
                                p.number("allSlotsBusy", d.allSlotsBusy()));
                        return new ScorerPlugin(
                                LORA_RESIDENCY_SCORER, LoraResidencyScorer.NAME, c -> new LoraResidencyScorer(own));
                    }),
            new PluginType(PREFILL_QUEUE_SCORER, List.of("minSpreadTokens"), p -> {
                int minSpread = p.integer("minSpreadTokens", (int) PrefillQueueScorer.DEFAULT_MIN_SPREAD_TOKENS, 1);
                return new ScorerPlugin(
                        PREFILL_QUEUE_SCORER, PrefillQueueScorer.NAME, c -> new PrefillQueueScorer(minSpread));
            }),
            new PluginType(
                    LORA_BRIDGE_SCORER,
                    List.of(),
                    p -> new ScorerPlugin(LORA_BRIDGE_SCORER, LoraBridgeScorer.NAME, c -> new LoraBridgeScorer())),
            new PluginType(
                    LORA_LOAD_STATE_SCORER,
                    List.of(
                            "gpuResident",
                            "cpuResident",
                            "freeSlot",
                            "evictable",
                            "saturated",
                            "homeBonus",
                            "headroomBonus"),
                    p -> {
                        LoraLoadStateScorer.Tiers d = LoraLoadStateScorer.Tiers.DEFAULT;
                        LoraLoadStateScorer.Tiers tiers = new LoraLoadStateScorer.Tiers(
                                p.number("gpuResident", d.gpuResident(), 0, 1),
                                p.number("cpuResident", d.cpuResident(), 0, 1),
                                p.number("freeSlot", d.freeSlot(), 0, 1),
                                p.number("evictable", d.evictable(), 0, 1),
                                p.number("saturated", d.saturated(), 0, 1),
                                p.number("homeBonus", d.homeBonus(), 0, 1),
                                p.number("headroomBonus", d.headroomBonus(), 0, 1));
                        return new ScorerPlugin(
                                LORA_LOAD_STATE_SCORER, LoraLoadStateScorer.NAME, c -> new LoraLoadStateScorer(tiers));
                    }),
            new PluginType(LORA_SPREAD_FILTER, List.of("overloadWaiting", "timeout", "cooldown", "persistence"), p -> {
                int overloadWaiting = p.integer("overloadWaiting", LoraSpreadFilter.DEFAULT_OVERLOAD_WAITING, 1);
                long timeout = p.duration(
                                "timeout",
                                Duration.ofNanos(LoraSpreadFilter.DEFAULT_TIMEOUT_NANOS),
                                Duration.ofMillis(1))
                        .toNanos();
                long cooldown = p.duration(
                                "cooldown", Duration.ofNanos(LoraSpreadFilter.DEFAULT_COOLDOWN_NANOS), Duration.ZERO)
                        .toNanos();
                long persistence = p.duration(
                                "persistence",
                                Duration.ofNanos(LoraSpreadFilter.DEFAULT_PERSISTENCE_NANOS),
                                Duration.ZERO)
                        .toNanos();
                LoraSpreadFilter.Settings settings =
                        new LoraSpreadFilter.Settings(overloadWaiting, timeout, cooldown, persistence);
                return new FilterPlugin(LORA_SPREAD_FILTER, c -> new LoraSpreadFilter(c.nanoClock(), settings));
            }),
            new PluginType(
                    LORA_CAPACITY_FILTER,
                    List.of(),
                    p -> new FilterPlugin(LORA_CAPACITY_FILTER, c -> new LoraCapacityFilter())),
            new PluginType(LORA_RESIDENCY_FILTER, List.of("maxReplicas", "queueThreshold", "kvCacheThreshold"), p -> {
                int maxReplicas = p.integer("maxReplicas", 0, 0);
                int queueThreshold = p.integer("queueThreshold", LoraResidencyFilter.DEFAULT_QUEUE_THRESHOLD, 0);
                double kvCacheThreshold =
                        p.number("kvCacheThreshold", LoraResidencyFilter.DEFAULT_KV_CACHE_THRESHOLD, 0, 1);
                LoraResidencyFilter.Settings settings =
                        new LoraResidencyFilter.Settings(maxReplicas, queueThreshold, kvCacheThreshold);
                return new FilterPlugin(LORA_RESIDENCY_FILTER, c -> new LoraResidencyFilter(settings));
            }),
            new PluginType(
                    MAX_SCORE_PICKER,
                    List.of(),
                    p -> new PickerPlugin(MAX_SCORE_PICKER, c -> new MaxScorePicker(c.random()))),
            new PluginType(
                    ROUND_ROBIN_PICKER,
                    List.of(),
                    p -> new PickerPlugin(ROUND_ROBIN_PICKER, c -> new RoundRobinPicker())),
            new PluginType(
                    PLACEMENT_SCORER,
                    List.of(),
                    p -> new ScorerPlugin(
                            PLACEMENT_SCORER, PlacementScorer.NAME, c -> new PlacementScorer(c.placement()))),
            new PluginType(
                    RENDEZVOUS_SCORER,
                    List.of(),
                    p -> new ScorerPlugin(RENDEZVOUS_SCORER, RendezvousScorer.NAME, c -> new RendezvousScorer())),
            new PluginType(
                    PLACEMENT_FILTER,
                    List.of(),
                    p -> new FilterPlugin(PLACEMENT_FILTER, c -> new PlacementFilter(c.placement()))),
            new PluginType(
                    OWN_PICKS_COUNTER,
                    List.of(),
                    p -> new PreRequestPlugin(OWN_PICKS_COUNTER, c -> new OwnPicksCounter()))));

    private PluginTypes() {}

    /** The type of that name, or null. */
    public static PluginType find(String name) {
        return TYPES.get(name);
    }

    public static List<String> names() {
        return List.copyOf(TYPES.keySet());
    }

    /** The picker of a profile that names none, as in the gateway: highest total score, random ties. */
    static PickerPlugin defaultPicker() {
        return (PickerPlugin) TYPES.get(MAX_SCORE_PICKER).plugin(PluginParameters.NONE);
    }

    /** Adds {@code type} to {@code registry}; a second type of the same name is an error, not a replacement. */
    static void register(Map<String, PluginType> registry, PluginType type) {
        if (registry.putIfAbsent(type.name(), type) != null) {
            throw new IllegalStateException("two plugin types named " + type.name());
        }
    }

    private static Map<String, PluginType> index(List<PluginType> types) {
        Map<String, PluginType> byName = new LinkedHashMap<>();
        for (PluginType type : types) {
            register(byName, type);
        }
        return byName;
    }
}
