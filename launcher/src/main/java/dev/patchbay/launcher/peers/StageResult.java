package dev.patchbay.launcher.peers;

import dev.patchbay.launcher.load.Ttft;
import java.util.Map;

/**
 * One setup's figures at one stage of the request stream: the load tool's view (times in ms) and the servers' own.
 *
 * @param stage         the stage's name, such as {@code poisson x1.0}
 * @param rate          requests per second asked of the load tool
 * @param sentRate      what it sent
 * @param requests      requests of the stage
 * @param errors        of them failed
 * @param served        requests the servers counted as done during the stage ({@code vllm:request_success_total})
 * @param throughput    completed requests per second
 * @param ttft          time to first token over the successful requests, ms
 * @param ttftByTier    the same per adapter tier (hot, warm, cold)
 * @param storageLoads  adapter loads from storage on the servers during the stage
 * @param slotEvictions adapters evicted from batch slots on the servers during the stage
 * @param slotRetries   requests Envoy sent on to the next endpoint the picker named after a server refused them for
 *                      want of a slot, during the stage; null for setups without Patchbay's picker behind Envoy
 * @param unsent        requests the load tool planned for the stage and never sent (inference-perf drops a request
 *                      whose prompt it cannot cut to the exact length, and reports nothing of it); null under aiperf
 */
public record StageResult(
        String setup,
        String stage,
        double rate,
        double sentRate,
        int requests,
        int errors,
        double served,
        double throughput,
        Ttft ttft,
        Map<String, Ttft> ttftByTier,
        double storageLoads,
        double slotEvictions,
        Long slotRetries,
        Integer unsent) {}
