package dev.patchbay.bench.sim;

import java.util.List;

/**
 * One policy at one request rate on one workload. Times in seconds.
 *
 * @param requests          requests in the trace
 * @param completed         requests that finished normally
 * @param failed            refused by a server, aborted or errored
 * @param unfinished        still queued or running when the run stopped (counted in TTFT with the time
 *                          they had waited, a lower bound)
 * @param outputTokens      tokens generated over the whole fleet
 * @param outputTokensPerSecond those tokens per virtual second
 * @param loadsFromStorage  adapter loads from storage into host memory, all replicas
 * @param loadsIntoSlots    adapter moves from host memory into a batch slot, all replicas
 * @param slotEvictions     adapters evicted from a batch slot to make room for another, all replicas
 * @param hostEvictions     adapters evicted from host memory (and with it from its slot, if it had one)
 * @param slotHitShare      share of scheduled requests whose adapter was already in a slot
 * @param virtualSeconds    simulated time until the last request ended
 * @param wallSeconds       real time the run took
 * @param requestsPerReplica requests the router sent to each replica
 * @param placementLoads    loads placement asked for ahead of demand (all routers; they count in the storage loads)
 * @param placementDisagreement with several routers, the share of requests whose adapter's homes differed among them
 * @param slotRefusals      requests a server refused for want of a batch slot (a slot another router's request had
 *                          taken), each held in its router again
 */
public record RunResult(
        String workload,
        String policy,
        double rate,
        int requests,
        int completed,
        int failed,
        int unfinished,
        double ttftP50,
        double ttftP90,
        double ttftP99,
        double e2eP99,
        long outputTokens,
        double outputTokensPerSecond,
        long loadsFromStorage,
        long loadsIntoSlots,
        long slotEvictions,
        long hostEvictions,
        double slotHitShare,
        double virtualSeconds,
        double wallSeconds,
        List<Integer> requestsPerReplica,
        long placementLoads,
        double placementDisagreement,
        long slotRefusals) {
    public RunResult {
        requestsPerReplica = List.copyOf(requestsPerReplica);
    }

    /** A run without placement. */
    public RunResult(
            String workload,
            String policy,
            double rate,
            int requests,
            int completed,
            int failed,
            int unfinished,
            double ttftP50,
            double ttftP90,
            double ttftP99,
            double e2eP99,
            long outputTokens,
            double outputTokensPerSecond,
            long loadsFromStorage,
            long loadsIntoSlots,
            long slotEvictions,
            long hostEvictions,
            double slotHitShare,
            double virtualSeconds,
            double wallSeconds,
            List<Integer> requestsPerReplica) {
        this(
                workload,
                policy,
                rate,
                requests,
                completed,
                failed,
                unfinished,
                ttftP50,
                ttftP90,
                ttftP99,
                e2eP99,
                outputTokens,
                outputTokensPerSecond,
                loadsFromStorage,
                loadsIntoSlots,
                slotEvictions,
                hostEvictions,
                slotHitShare,
                virtualSeconds,
                wallSeconds,
                requestsPerReplica,
                0,
                0,
                0);
    }

    /** The same result without the wall time, for comparing two runs. */
    public RunResult withoutWallTime() {
        return copy(policy, 0, placementLoads, placementDisagreement, slotRefusals);
    }

    /** The same result under another policy name. */
    public RunResult withPolicy(String name) {
        return copy(name, wallSeconds, placementLoads, placementDisagreement, slotRefusals);
    }

    /** The same result with placement's figures. */
    public RunResult withPlacement(long loads, double disagreement) {
        return copy(policy, wallSeconds, loads, disagreement, slotRefusals);
    }

    /** The same result with the requests servers refused for want of a slot, and their routers held again. */
    public RunResult withSlotRefusals(long refusals) {
        return copy(policy, wallSeconds, placementLoads, placementDisagreement, refusals);
    }

    private RunResult copy(
            String policy, double wallSeconds, long placementLoads, double placementDisagreement, long slotRefusals) {
        return new RunResult(
                workload,
                policy,
                rate,
                requests,
                completed,
                failed,
                unfinished,
                ttftP50,
                ttftP90,
                ttftP99,
                e2eP99,
                outputTokens,
                outputTokensPerSecond,
                loadsFromStorage,
                loadsIntoSlots,
                slotEvictions,
                hostEvictions,
                slotHitShare,
                virtualSeconds,
                wallSeconds,
                requestsPerReplica,
                placementLoads,
                placementDisagreement,
                slotRefusals);
    }
}
