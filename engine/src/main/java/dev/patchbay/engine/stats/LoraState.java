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
        double activityChangedUnixSeconds) {}
