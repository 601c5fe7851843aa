package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.LoraPlacement;

/**
 * The lora-residency scorer's score for each {@link LoraPlacement} (a load under way or queued scores
 * as in a slot); the fleet benchmark tunes these. They must keep the placement order (each at least the next one).
 */
public record ResidencyScores(double inSlot, double inHost, double freeSlot, double idleSlot, double allSlotsBusy) {
    public static final ResidencyScores DEFAULT = new ResidencyScores(1.0, 0.7, 0.6, 0.3, 0.0);

    public ResidencyScores {
        if (!(inSlot >= inHost && inHost >= freeSlot && freeSlot >= idleSlot && idleSlot >= allSlotsBusy)) {
            throw new IllegalArgumentException("residency scores must not increase from inSlot to allSlotsBusy: "
                    + inSlot + ", " + inHost + ", " + freeSlot + ", " + idleSlot + ", " + allSlotsBusy);
        }
    }

    public double of(LoraPlacement placement) {
        return switch (placement) {
            case IN_SLOT, LOADING, QUEUED -> inSlot; // a load under way or queued is paid for already
            case IN_HOST -> inHost;
            case FREE_SLOT -> freeSlot;
            case IDLE_SLOT -> idleSlot;
            case ALL_SLOTS_BUSY -> allSlotsBusy;
        };
    }
}
