package dev.patchbay.router.flow;

import java.time.Duration;

/**
 * What happens to a request between its admission and its pick, outside any profile: shedding at saturation, and the
 * wait in the router for a batch slot.
 *
 * @param slotWait   how long an adapter request may wait in the router while no endpoint has a slot for its adapter
 *                   ({@link SlotWaitQueue}); zero: it never waits
 * @param saturation when sheddable requests are refused
 */
public record FlowControl(Duration slotWait, SaturationDetector saturation) {
    /** The slot wait of the default profile: see {@link SlotWaitQueue} for why a second. */
    public static final Duration DEFAULT_SLOT_WAIT = Duration.ofSeconds(1);
    /** No slot wait, default shedding. */
    public static final FlowControl NO_SLOT_WAIT = new FlowControl(Duration.ZERO, SaturationDetector.DEFAULT);

    public FlowControl {
        if (slotWait == null || slotWait.isNegative()) {
            throw new IllegalArgumentException("the slot wait must be 0 (none) or more");
        }
        if (saturation == null) {
            saturation = SaturationDetector.DEFAULT;
        }
    }

    public static FlowControl slotWait(Duration slotWait) {
        return new FlowControl(slotWait, SaturationDetector.DEFAULT);
    }

    public long slotWaitNanos() {
        return slotWait.toNanos();
    }
}
