package dev.patchbay.router.pick;

import java.util.ArrayList;
import java.util.List;

/**
 * A picker written out as text, one line per part with every parameter: two pickers with the same shape are built
 * alike. A part of a class not listed here fails the test that asks, so a new scorer cannot slip past unchecked.
 */
public final class PickerShape {
    private PickerShape() {}

    public static List<String> of(EndpointPicker picker) {
        List<String> lines = new ArrayList<>();
        lines.add("name " + picker.name());
        for (Filter filter : picker.filters()) {
            lines.add("filter " + filter(filter));
        }
        for (WeightedScorer w : picker.scorers()) {
            lines.add("scorer " + scorer(w.scorer()) + " weight " + w.weight());
        }
        lines.add("picker " + picker.picker().getClass().getSimpleName());
        for (PreRequest hook : picker.preRequests()) {
            lines.add("pre-request " + hook.getClass().getSimpleName());
        }
        return lines;
    }

    private static String filter(Filter filter) {
        return switch (filter) {
            case LoraSpreadFilter f -> "lora-spread " + f.settings();
            case LoraCapacityFilter f -> "lora-capacity";
            case LoraResidencyFilter f ->
                "lora-residency maxReplicas=" + f.maxReplicas() + " queueThreshold=" + f.queueThreshold()
                        + " kvCacheThreshold=" + f.kvCacheThreshold();
            default -> throw new AssertionError("no shape for " + filter.getClass());
        };
    }

    private static String scorer(Scorer scorer) {
        return switch (scorer) {
            case QueueScorer s -> "queue minSpread=" + s.minSpread() + (s.slotTurnover() ? " slotTurnover" : "");
            case KvCacheScorer s -> "kv-cache";
            case LoraAffinityScorer s -> "lora-affinity" + (s.distinctAdapters() ? " distinctAdapters" : "");
            case LoraResidencyScorer s -> "lora-residency " + s.scores();
            case PrefillQueueScorer s -> "prefill-queue minSpreadTokens=" + s.minSpreadTokens();
            case LoraBridgeScorer s -> "lora-bridge";
            case LoraLoadStateScorer s -> "lora-load-state " + s.tiers();
            default -> throw new AssertionError("no shape for " + scorer.getClass());
        };
    }
}
