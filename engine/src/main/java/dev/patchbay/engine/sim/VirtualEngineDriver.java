package dev.patchbay.engine.sim;

import dev.patchbay.engine.clock.VirtualClock;
import dev.patchbay.engine.sched.EngineCore;
import java.util.PriorityQueue;

/**
 * Runs one engine on a virtual clock with timed events (arrivals, aborts, loads): no threads, no sleeping,
 * and the same inputs always give the same trace.
 */
public final class VirtualEngineDriver {
    private record Event(long atNanos, long order, Runnable action) {}

    private final EngineCore core;
    private final VirtualClock clock;
    private final PriorityQueue<Event> events = new PriorityQueue<>(
            (a, b) -> a.atNanos != b.atNanos ? Long.compare(a.atNanos, b.atNanos) : Long.compare(a.order, b.order));
    private long order;

    public VirtualEngineDriver(EngineCore core, VirtualClock clock) {
        this.core = core;
        this.clock = clock;
    }

    /** Runs {@code action} when virtual time reaches {@code atNanos}. */
    public void at(long atNanos, Runnable action) {
        events.add(new Event(atNanos, order++, action));
    }

    /** Fires events and runs the steps that start before {@code endNanos}, or until nothing is left to happen. */
    public void runUntil(long endNanos) {
        while (true) {
            while (!events.isEmpty() && events.peek().atNanos <= clock.nanos())
                events.poll().action.run();
            if (clock.nanos() >= endNanos) return;
            EngineCore.PendingStep step = core.beginStep();
            if (step != null) {
                clock.advanceTo(step.startNanos() + step.modeledNanos());
                core.finishStep(step, clock.nanos());
                continue;
            }
            long next = Math.min(events.isEmpty() ? Long.MAX_VALUE : events.peek().atNanos, core.nextTimedEventNanos());
            if (next == Long.MAX_VALUE || next > endNanos) {
                if (endNanos != Long.MAX_VALUE && endNanos > clock.nanos()) clock.advanceTo(endNanos);
                return;
            }
            clock.advanceTo(Math.max(next, clock.nanos()));
        }
    }

    /** Runs until no event, request or load is left. */
    public void runToCompletion() {
        runUntil(Long.MAX_VALUE);
    }
}
