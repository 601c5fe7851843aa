package dev.patchbay.launcher.load;

import dev.patchbay.bench.sim.Percentiles;
import java.util.List;

/**
 * Time to first token percentiles in ms over {@code count} requests (NaN when there are none): nearest rank on the
 * sorted sample, as the fleet simulator's reports compute them, whichever load tool measured the times.
 */
public record Ttft(int count, double p50, double p90, double p99) {
    public static Ttft of(List<Double> millis) {
        double[] sorted =
                millis.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return new Ttft(
                sorted.length,
                Percentiles.nearestRank(sorted, 50),
                Percentiles.nearestRank(sorted, 90),
                Percentiles.nearestRank(sorted, 99));
    }
}
