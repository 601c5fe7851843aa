package dev.patchbay.engine.stats;

import dev.patchbay.engine.FinishReason;

/** Finished requests by reason, immutable. */
public record FinishCounts(long stop, long length, long abort, long error) {
    public static final FinishCounts ZERO = new FinishCounts(0, 0, 0, 0);

    public long get(FinishReason r) {
        return switch (r) {
            case STOP -> stop;
            case LENGTH -> length;
            case ABORT -> abort;
            case ERROR -> error;
        };
    }

    public FinishCounts plus(FinishReason r) {
        return new FinishCounts(
                stop + (r == FinishReason.STOP ? 1 : 0),
                length + (r == FinishReason.LENGTH ? 1 : 0),
                abort + (r == FinishReason.ABORT ? 1 : 0),
                error + (r == FinishReason.ERROR ? 1 : 0));
    }

    public long total() {
        return stop + length + abort + error;
    }
}
