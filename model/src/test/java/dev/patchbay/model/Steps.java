package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.exec.ScheduledSequence;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.IntStream;

/** Builds scheduled sequences and compares logits. */
final class Steps {
    private Steps() {}

    static ScheduledSequence seq(long id, int[] tokens, int start, int[] blocks, int slot, boolean sample) {
        return new ScheduledSequence(
                id, tokens, start, blocks, slot, sample, SamplingParams.greedy(16), new Random(id), tokens, 0);
    }

    static int[] range(int from, int count) {
        return IntStream.range(from, from + count).toArray();
    }

    static int[] slice(int[] a, int from, int to) {
        return Arrays.copyOfRange(a, from, to);
    }

    /** max |actual - expected| is at most {@code rel} times max |expected|. */
    static void assertClose(float[] actual, float[] expected, double rel) {
        assertThat(actual).hasSameSizeAs(expected);
        double maxRef = 0, maxDiff = 0;
        for (int i = 0; i < expected.length; i++) {
            maxRef = Math.max(maxRef, Math.abs(expected[i]));
            maxDiff = Math.max(maxDiff, Math.abs(actual[i] - expected[i]));
        }
        assertThat(maxRef).isGreaterThan(0);
        assertThat(maxDiff / maxRef).as("relative difference of logits").isLessThanOrEqualTo(rel);
    }

    static double relativeDifference(float[] actual, float[] expected) {
        double maxRef = 0, maxDiff = 0;
        for (int i = 0; i < expected.length; i++) {
            maxRef = Math.max(maxRef, Math.abs(expected[i]));
            maxDiff = Math.max(maxDiff, Math.abs(actual[i] - expected[i]));
        }
        return maxDiff / maxRef;
    }
}
