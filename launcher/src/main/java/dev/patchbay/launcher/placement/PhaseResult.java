package dev.patchbay.launcher.placement;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;

/**
 * One phase of one setup: what the clients saw, what the servers counted, what placement did.
 *
 * @param phase              {@code warm-up}, {@code window-1}, {@code shift} or {@code window-2}
 * @param weights            the adapters' popularity weights during the phase
 * @param sent               requests sent during the phase
 * @param failed             of them, answered other than 200 with a complete stream
 * @param failures           why they failed, with how many each
 * @param ttftP50            client-side time to the first streamed token, ms
 * @param ttftP99            the same, 99th percentile
 * @param requestsPerServer  requests each server finished during the phase ({@code vllm:request_success_total})
 * @param busiestToLeast     the most requests a server finished over the fewest
 * @param slotHitRate        scheduled requests whose adapter was already in a batch slot
 *                           ({@code vllm:lora_cache_hits_total / vllm:lora_cache_lookups_total}, level gpu)
 * @param storageLoads       adapter loads from storage on the servers ({@code vllm:lora_adapter_loads_total}, disk)
 * @param placementLoads     loads placement started (null: placement off)
 * @param placementUnloads   unloads placement started (null: placement off)
 * @param placementFailed    loads and unloads that failed (null: placement off)
 * @param adapterSpread      per adapter, requests sent during the phase that each server got (the proxy's
 *                           {@code x-gateway-destination-endpoint} answer header)
 * @param placementAtEnd     the router's {@code /admin/placement} at the end of the phase (null: placement off)
 */
record PhaseResult(
        String phase,
        List<Double> weights,
        int sent,
        int failed,
        Map<String, Integer> failures,
        double ttftP50,
        double ttftP99,
        List<Double> requestsPerServer,
        double busiestToLeast,
        double slotHitRate,
        double storageLoads,
        Long placementLoads,
        Long placementUnloads,
        Long placementFailed,
        Map<String, List<Double>> adapterSpread,
        JsonNode placementAtEnd) {

    /** Whether the phase is one the balance and hit-rate targets are judged on. */
    boolean measured() {
        return phase.startsWith("window");
    }
}
