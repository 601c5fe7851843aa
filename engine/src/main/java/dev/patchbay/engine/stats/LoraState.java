package dev.patchbay.engine.stats;

import java.util.List;

/**
 * The LoRA side of a snapshot.
 *
 * @param adapters          every adapter resident in a tier or with requests in flight, sorted by name
 * @param slotsUsed         adapters in batch slots
 * @param hostOnly          adapters in host memory and not in a slot
 * @param runningAdapters   names with running requests, sorted (the legacy gauge's {@code running_lora_adapters})
 * @param waitingAdapters   names with waiting requests, sorted (the legacy gauge's {@code waiting_lora_adapters})
 * @param activityChangedUnixSeconds when the two name sets last changed (the legacy gauge's value)
 */
public record LoraState(
        int maxLoras,
        int maxCpuLoras,
        int maxLoraRank,
        String loraDtype,
        List<AdapterState> adapters,
        int slotsUsed,
        int hostOnly,
        List<String> runningAdapters,
        List<String> waitingAdapters,
        double activityChangedUnixSeconds) {

    /**
     * Whether a request for {@code adapter} would have a batch slot without waiting for other adapters' requests to
     * end: the adapter is in a slot, or its requests wait already (a new one joins their load), or a slot is free or
     * held by an idle unpinned adapter beyond those the adapters waiting for a slot will take.
     */
    public boolean hasSlotFor(String adapter) {
        int claimed = 0, queued = 0;
        for (AdapterState a : adapters) {
            boolean inSlot = a.level() == AdapterState.Level.GPU;
            if (a.name().equals(adapter) && (inSlot || a.waiting() > 0)) return true;
            if (inSlot && (a.pinned() || a.running() + a.waiting() > 0)) claimed++;
            if (!inSlot && a.waiting() > 0) queued++;
        }
        return maxLoras - claimed - queued > 0;
    }
}
