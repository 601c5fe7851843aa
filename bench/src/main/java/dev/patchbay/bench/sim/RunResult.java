package dev.patchbay.bench.sim;

/**
 * One policy at one request rate on one workload. Times in seconds.
 *
 * @param requests          requests in the trace
 * @param completed         requests that finished normally
 * @param failed            refused by a server, aborted or errored
 * @param unfinished        still queued or running when the run stopped (counted in TTFT with the time
 *                          they had waited, a lower bound)
 * @param outputTokensPerSecond tokens generated over the whole fleet per virtual second
 * @param loadsFromStorage  adapter loads from storage into host memory, all replicas
 * @param loadsIntoSlots    adapter moves from host memory into a batch slot, all replicas
 * @param slotEvictions     adapters evicted from a batch slot, all replicas
 * @param slotHitShare      share of scheduled requests whose adapter was already in a slot
 * @param virtualSeconds    simulated time until the last request ended
 * @param wallSeconds       real time the run took
 */
public record RunResult(String workload, String policy, double rate, int requests, int completed, int failed,
                        int unfinished, double ttftP50, double ttftP90, double ttftP99, double e2eP99,
                        double outputTokensPerSecond, long loadsFromStorage, long loadsIntoSlots, long slotEvictions,
                        double slotHitShare, double virtualSeconds, double wallSeconds) {
}
