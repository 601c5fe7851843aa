package dev.patchbay.router.scrape;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What one model server's metrics page said (or an engine snapshot, built directly by the fleet simulator), and
 * nothing derived from it: {@link EndpointMetrics} adds what follows.
 *
 * @param modelName          the served base model ({@code model_name} label), or null if unknown
 * @param waitingRequests    {@code vllm:num_requests_waiting}
 * @param runningRequests    {@code vllm:num_requests_running}
 * @param kvCacheUsage       {@code vllm:kv_cache_usage_perc}, 0..1
 * @param hasWaitingByReason true when {@code vllm:num_requests_waiting_by_reason} was on the page
 * @param waitingDeferred    its {@code reason="deferred"} samples: waiting requests the server's scheduler held back
 *                           for their adapter (LoRA budget); 0 when the family is missing
 * @param tokensWaiting      {@code vllm:num_tokens_waiting}: prompt tokens the server has yet to prefill; -1 when the
 *                           family is missing
 * @param activeAdapters     legacy gauge: {@code running_lora_adapters}
 * @param waitingAdapters    legacy gauge: {@code waiting_lora_adapters}
 * @param maxLora            legacy gauge: {@code max_lora}; 0 when the family is missing
 * @param hasResidencyFamilies true when the residency families were on the page; the fields below are meaningful
 *                           only then
 * @param adapterRunning     {@code vllm:num_lora_requests_running} per adapter (zeros may be absent)
 * @param adapterWaiting     {@code vllm:num_lora_requests_waiting} per adapter (zeros may be absent)
 * @param residency          {@code vllm:lora_adapter_loaded}: every resident adapter and its tier
 * @param gpuSlots           {@code vllm:max_gpu_lora_adapters}
 * @param gpuSlotsUsed       {@code vllm:num_gpu_loaded_lora_adapters}
 */
public record PageMetrics(
        String modelName,
        int waitingRequests,
        int runningRequests,
        double kvCacheUsage,
        boolean hasWaitingByReason,
        int waitingDeferred,
        long tokensWaiting,
        Set<String> activeAdapters,
        Set<String> waitingAdapters,
        int maxLora,
        boolean hasResidencyFamilies,
        Map<String, Integer> adapterRunning,
        Map<String, Integer> adapterWaiting,
        Map<String, AdapterResidency> residency,
        int gpuSlots,
        int gpuSlotsUsed) {

    public PageMetrics {
        activeAdapters = Set.copyOf(activeAdapters);
        waitingAdapters = Set.copyOf(waitingAdapters);
        adapterRunning = Map.copyOf(adapterRunning);
        adapterWaiting = Map.copyOf(adapterWaiting);
        residency = Map.copyOf(residency);
    }

    /**
     * This page as it will read once a request the router has just sent shows on it: one more waiting request (or,
     * with {@code running}, one more running one), and for an adapter request the adapter among the waiting (running)
     * ones. With the residency families, an adapter that can get a slot at once (it is in host memory, or a slot is
     * free) is counted as taking one, so that the next picks before the following scrape see the slot used.
     *
     * @param adapter the request's adapter, or null for a base-model request
     */
    PageMetrics withOwnRequest(String adapter, boolean running) {
        Set<String> names = running ? activeAdapters : waitingAdapters;
        Map<String, Integer> counts = running ? adapterRunning : adapterWaiting;
        Map<String, AdapterResidency> resident = residency;
        int slotsUsed = gpuSlotsUsed;
        if (adapter != null) {
            names = new HashSet<>(names);
            names.add(adapter);
        }
        if (adapter != null && hasResidencyFamilies) {
            counts = new HashMap<>(counts);
            counts.merge(adapter, 1, Integer::sum);
            AdapterResidency here = residency.get(adapter);
            if ((here == null || !here.inSlot()) && gpuSlotsUsed < gpuSlots) {
                resident = new HashMap<>(residency);
                resident.put(
                        adapter,
                        new AdapterResidency(true, here != null && here.pinned(), here == null ? 0 : here.rank()));
                slotsUsed++;
            }
        }
        return new PageMetrics(
                modelName,
                waitingRequests + (running ? 0 : 1),
                runningRequests + (running ? 1 : 0),
                kvCacheUsage,
                hasWaitingByReason,
                waitingDeferred,
                tokensWaiting,
                running ? names : activeAdapters,
                running ? waitingAdapters : names,
                maxLora,
                hasResidencyFamilies,
                running ? counts : adapterRunning,
                running ? adapterWaiting : counts,
                resident,
                gpuSlots,
                slotsUsed);
    }
}
