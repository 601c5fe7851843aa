package dev.patchbay.engine;

import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.engine.sched.Request;
import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Checks every snapshot, on the engine thread, against the invariants of the metrics contract and against
 * the scheduler's own sets at that instant. Violations are collected, not thrown, so the engine keeps going.
 */
final class SnapshotInvariants implements Consumer<EngineSnapshot> {
    private final EngineCore core;
    final List<String> violations = new ArrayList<>();
    long checked;

    SnapshotInvariants(EngineCore core) {
        this.core = core;
    }

    @Override
    public void accept(EngineSnapshot s) {
        checked++;
        check(s.kvBlocksUsed() <= s.kvBlocksTotal(), s, "KV blocks used exceed total");
        check(s.kvBlocksUsed() == s.kvBlocksTotal() - core.freeKvBlocks(), s, "KV use differs from the cache");
        Map<String, int[]> actual = new HashMap<>();
        for (Request r : core.activeRequests()) {
            if (r.adapter() == null || r.status() == Request.Status.FINISHED) continue;
            int[] c = actual.computeIfAbsent(r.adapter().name(), k -> new int[2]);
            c[r.status() == Request.Status.RUNNING ? 0 : 1]++;
        }
        if (s.lora() == null) return;
        int running = 0, waiting = 0, gpu = 0, cpu = 0;
        for (AdapterState a : s.lora().adapters()) {
            running += a.running();
            waiting += a.waiting();
            if (a.level() == Level.GPU) gpu++;
            if (a.level() == Level.CPU) cpu++;
            int[] c = actual.remove(a.name());
            if (c == null) c = new int[2];
            check(
                    c[0] == a.running() && c[1] == a.waiting(),
                    s,
                    a.name() + " counts " + a.running() + "/" + a.waiting() + " but the scheduler holds " + c[0] + "/"
                            + c[1]);
            if (a.running() > 0) check(a.level() == Level.GPU, s, a.name() + " runs but is not in a slot");
            check(a.level() != Level.NONE || a.memoryBytes() == 0, s, a.name() + " has memory but is not resident");
        }
        check(actual.isEmpty(), s, "adapters with requests missing from the snapshot: " + actual.keySet());
        check(running <= s.numRunning(), s, "adapter running sum " + running + " > " + s.numRunning());
        check(waiting <= s.numWaiting(), s, "adapter waiting sum " + waiting + " > " + s.numWaiting());
        check(s.lora().slotsUsed() <= s.lora().maxLoras(), s, "slots used exceed max_loras");
        check(
                gpu == s.lora().slotsUsed(),
                s,
                "gpu-level adapters " + gpu + " != slots used " + s.lora().slotsUsed());
        check(
                cpu == s.lora().hostOnly(),
                s,
                "cpu-level adapters " + cpu + " != host only " + s.lora().hostOnly());
        check(gpu + cpu <= s.lora().maxCpuLoras(), s, "host tier holds more than max_cpu_loras");
        List<String> runningNames = s.lora().adapters().stream()
                .filter(a -> a.running() > 0)
                .map(AdapterState::name)
                .sorted()
                .toList();
        List<String> waitingNames = s.lora().adapters().stream()
                .filter(a -> a.waiting() > 0)
                .map(AdapterState::name)
                .sorted()
                .toList();
        check(runningNames.equals(s.lora().runningAdapters()), s, "legacy running set differs");
        check(waitingNames.equals(s.lora().waitingAdapters()), s, "legacy waiting set differs");
    }

    private void check(boolean ok, EngineSnapshot s, String what) {
        if (!ok && violations.size() < 20) violations.add("snapshot " + s.sequence() + ": " + what);
    }
}
