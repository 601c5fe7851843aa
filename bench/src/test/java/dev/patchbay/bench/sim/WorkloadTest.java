package dev.patchbay.bench.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class WorkloadTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void gieMultiloraSplitsTrafficSixtyThirtyTen() {
        Workload w = Workload.gieMultilora();
        assertThat(w.adapters()).hasSize(15);
        assertThat(w.share(0)).isCloseTo(0.12, within(1e-9));
        assertThat(w.share(7)).isCloseTo(0.06, within(1e-9));
        assertThat(w.share(14)).isCloseTo(0.02, within(1e-9));
        assertThat(w.maxLoras()).isEqualTo(3);
        assertThat(w.replicas()).isEqualTo(10);
    }

    @Test
    void traceFollowsRatePopularityAndMeanLengths() {
        Workload w = Workload.zipf(100, 1.1);
        Trace t = Trace.generate(w, 200, 100 * SECOND, Arrivals.POISSON, Trace.Lengths.SHAREGPT_LIKE, 4096, 1);
        assertThat(t.size()).isBetween(19_000, 21_000);
        long first = Arrays.stream(t.adapter()).filter(a -> a == 0).count();
        assertThat((double) first / t.size()).isCloseTo(w.share(0), within(0.01));
        assertThat(Arrays.stream(t.promptTokens()).average().orElseThrow()).isCloseTo(220, within(10.0));
        assertThat(Arrays.stream(t.outputTokens()).average().orElseThrow()).isCloseTo(190, within(10.0));
        for (int i = 1; i < t.size(); i++)
            assertThat(t.arrivalNanos()[i]).isGreaterThanOrEqualTo(t.arrivalNanos()[i - 1]);
    }

    @Test
    void gammaArrivalsKeepTheRateAndAreBurstier() {
        Workload w = Workload.uniform(10);
        Trace poisson = Trace.generate(w, 100, 200 * SECOND, Arrivals.POISSON, Trace.Lengths.SHAREGPT_LIKE, 4096, 2);
        Trace bursty = Trace.generate(w, 100, 200 * SECOND, new Arrivals(4), Trace.Lengths.SHAREGPT_LIKE, 4096, 2);
        assertThat(bursty.size()).isBetween(17_000, 23_000);
        assertThat(gapCv(bursty)).isGreaterThan(3).isGreaterThan(2 * gapCv(poisson));
        assertThat(gapCv(poisson)).isCloseTo(1.0, within(0.1));
    }

    private static double gapCv(Trace t) {
        double[] gaps = new double[t.size() - 1];
        for (int i = 1; i < t.size(); i++) gaps[i - 1] = t.arrivalNanos()[i] - t.arrivalNanos()[i - 1];
        double mean = Arrays.stream(gaps).average().orElseThrow();
        double var =
                Arrays.stream(gaps).map(g -> (g - mean) * (g - mean)).average().orElseThrow();
        return Math.sqrt(var) / mean;
    }
}
