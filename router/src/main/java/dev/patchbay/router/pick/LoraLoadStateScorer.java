package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.List;
import java.util.Map;

/**
 * llm-d's proposed residency scorer ({@code lora-load-state-scorer}, llm-d-router PR #2792), kept as a peer to
 * compare against. It reads {@code vllm:lora_adapter_loaded} and the slot gauges and scores an endpoint by what
 * serving the adapter there would take: 1.0 in a GPU slot, 0.7 in host memory only, 0.6 a free slot, 0.3 a slot
 * whose unpinned adapter has nothing in flight, 0 when every slot is busy. Tier scores are squeezed by
 * {@code 1 - (homeBonus + headroomBonus)} so that the bonuses reorder endpoints only within a tier: the adapter's
 * rendezvous-hash home gets {@code homeBonus} unless the adapter is already in a slot there, and every endpoint
 * gets {@code headroomBonus} times its share of free slots. A base-model request scores the share of slots not
 * serving an adapter right now, without bonuses.
 */
public final class LoraLoadStateScorer implements Scorer {
    public static final String NAME = "lora-load-state";

    /** The tier scores and bonuses; the defaults are the PR's. */
    public record Tiers(
            double gpuResident,
            double cpuResident,
            double freeSlot,
            double evictable,
            double saturated,
            double homeBonus,
            double headroomBonus) {
        public static final Tiers DEFAULT = new Tiers(1.0, 0.7, 0.6, 0.3, 0.0, 0.03, 0.03);

        /** Every score and bonus in [0, 1], tiers non-increasing, and no bonus able to lift a tier past the next. */
        public Tiers {
            double[] tiers = {gpuResident, cpuResident, freeSlot, evictable, saturated};
            double budget = homeBonus + headroomBonus;
            for (double v :
                    new double[] {gpuResident, cpuResident, freeSlot, evictable, saturated, homeBonus, headroomBonus}) {
                if (!(v >= 0 && v <= 1))
                    throw new IllegalArgumentException("lora-load-state scores must be in [0, 1], got " + v);
            }
            if (budget >= 1) throw new IllegalArgumentException("lora-load-state bonuses must add up to less than 1");
            for (int i = 1; i < tiers.length; i++) {
                double gap = tiers[i - 1] - tiers[i];
                if (gap < 0)
                    throw new IllegalArgumentException("lora-load-state tiers must not increase: "
                            + List.of(gpuResident, cpuResident, freeSlot, evictable, saturated));
                if (gap > 0 && gap * (1 - budget) <= budget) {
                    throw new IllegalArgumentException(
                            "lora-load-state bonuses " + budget + " could lift a tier over the next (gap " + gap + ")");
                }
            }
        }
    }

    private final Tiers tiers;

    public LoraLoadStateScorer(Tiers tiers) {
        this.tiers = tiers;
    }

    public LoraLoadStateScorer() {
        this(Tiers.DEFAULT);
    }

    public Tiers tiers() {
        return tiers;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        double scale = 1 - tiers.homeBonus() - tiers.headroomBonus();
        double[] scores = new double[candidates.size()];
        if (request.baseModel()) {
            for (int i = 0; i < scores.length; i++)
                scores[i] = baseModelHeadroom(candidates.get(i).metrics()) * scale;
            return scores;
        }
        String adapter = request.model();
        int home = home(adapter, candidates);
        for (int i = 0; i < scores.length; i++) {
            EndpointMetrics m = candidates.get(i).metrics();
            AdapterResidency r = m.residency().get(adapter);
            double s = tier(m, r) * scale;
            if (i == home && (r == null || !r.inSlot())) s += tiers.homeBonus();
            int slots = slots(m);
            int used = m.gpuSlotsUsed();
            if (slots > 0 && used < slots) s += tiers.headroomBonus() * (slots - used) / slots;
            scores[i] = s;
        }
        return scores;
    }

    private double tier(EndpointMetrics m, AdapterResidency r) {
        if (r != null) return r.inSlot() ? tiers.gpuResident() : tiers.cpuResident();
        if (m.gpuSlotsUsed() < slots(m)) return tiers.freeSlot();
        if (hasIdleSlotAdapter(m)) return tiers.evictable();
        return tiers.saturated();
    }

    /**
     * An unpinned adapter in a slot with no request in flight: named in neither label of the legacy gauge. A request
     * waiting for its turn keeps its adapter's slot as surely as a running one.
     */
    private static boolean hasIdleSlotAdapter(EndpointMetrics m) {
        for (Map.Entry<String, AdapterResidency> e : m.residency().entrySet()) {
            if (e.getValue().inSlot() && !e.getValue().pinned() && !inFlight(m, e.getKey())) return true;
        }
        return false;
    }

    private static boolean inFlight(EndpointMetrics m, String adapter) {
        return m.activeAdapters().contains(adapter) || m.waitingAdapters().contains(adapter);
    }

    private static double baseModelHeadroom(EndpointMetrics m) {
        int slots = slots(m);
        if (slots <= 0) return 1.0;
        int busy = 0;
        for (Map.Entry<String, AdapterResidency> e : m.residency().entrySet()) {
            if (e.getValue().inSlot() && inFlight(m, e.getKey())) busy++;
        }
        return Math.max(slots - busy, 0) / (double) slots;
    }

    /** {@code vllm:max_gpu_lora_adapters}, else the legacy gauge's {@code max_lora}. */
    static int slots(EndpointMetrics m) {
        return m.gpuSlots() > 0 ? m.gpuSlots() : m.maxLora();
    }

    /** The candidate with the highest FNV-1a-64 hash of adapter, a zero byte and its address (unsigned), or -1. */
    static int home(String adapter, List<EndpointState> candidates) {
        int best = -1;
        long bestHash = 0;
        for (int i = 0; i < candidates.size(); i++) {
            long h = Rendezvous.fnv1a64(adapter, candidates.get(i).endpoint().address());
            if (best < 0 || Long.compareUnsigned(h, bestHash) > 0) {
                best = i;
                bestHash = h;
            }
        }
        return best;
    }
}
