package dev.patchbay.engine.sim;

/**
 * Step and load times of the simulated executor. Defaults are published figures for an 8B model on one
 * modern GPU: step overhead 5 ms, 0.1 ms per prefill token, 0.2 ms per decoding sequence, 0.5 ms per
 * distinct adapter in the batch, 80 ms to load an adapter from storage, 3 ms from host memory into a slot.
 */
public record LatencyModel(
        long stepOverheadNanos,
        long perPrefillTokenNanos,
        long perDecodeSequenceNanos,
        long perAdapterNanos,
        long loadFromDiskNanos,
        long loadIntoSlotNanos) {

    public static final LatencyModel DEFAULT = ofMillis(5, 0.1, 0.2, 0.5, 80, 3);
    /** Every cost zero: the engine runs as fast as the scheduler allows (tests, overhead benchmarks). */
    public static final LatencyModel ZERO = new LatencyModel(0, 0, 0, 0, 0, 0);

    public LatencyModel {
        if (stepOverheadNanos < 0
                || perPrefillTokenNanos < 0
                || perDecodeSequenceNanos < 0
                || perAdapterNanos < 0
                || loadFromDiskNanos < 0
                || loadIntoSlotNanos < 0) {
            throw new IllegalArgumentException("latency model coefficients must be >= 0");
        }
    }

    public static LatencyModel ofMillis(
            double overhead,
            double perPrefillToken,
            double perDecodeSequence,
            double perAdapter,
            double loadFromDisk,
            double loadIntoSlot) {
        return new LatencyModel(
                ms(overhead),
                ms(perPrefillToken),
                ms(perDecodeSequence),
                ms(perAdapter),
                ms(loadFromDisk),
                ms(loadIntoSlot));
    }

    private static long ms(double v) {
        return Math.round(v * 1_000_000);
    }

    public long stepNanos(int prefillTokens, int decodeSequences, int adapters) {
        return stepOverheadNanos
                + prefillTokens * perPrefillTokenNanos
                + decodeSequences * perDecodeSequenceNanos
                + adapters * perAdapterNanos;
    }
}
