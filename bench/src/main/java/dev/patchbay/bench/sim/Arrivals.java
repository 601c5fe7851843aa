package dev.patchbay.bench.sim;

import java.util.SplittableRandom;

/**
 * Inter-arrival times: Poisson (exponential gaps), or a Gamma renewal process whose coefficient of
 * variation sets burstiness (cv 1 is Poisson; S-LoRA's traces use cv 1 to 8).
 */
public record Arrivals(double cv) {
    public static final Arrivals POISSON = new Arrivals(1.0);

    public Arrivals {
        if (!(cv > 0)) throw new IllegalArgumentException("arrival cv must be > 0, got " + cv);
    }

    /** The next gap in seconds at {@code ratePerSecond}. */
    public double nextGapSeconds(double ratePerSecond, SplittableRandom rnd) {
        double mean = 1.0 / ratePerSecond;
        if (cv == 1.0) return -Math.log(1 - rnd.nextDouble()) * mean;
        double shape = 1.0 / (cv * cv);
        return gamma(shape, rnd) * mean / shape;
    }

    /** Marsaglia and Tsang's method; shapes below 1 through the boost X * U^(1/shape). */
    static double gamma(double shape, SplittableRandom rnd) {
        if (shape < 1) return gamma(shape + 1, rnd) * Math.pow(rnd.nextDouble(), 1.0 / shape);
        double d = shape - 1.0 / 3, c = 1 / Math.sqrt(9 * d);
        while (true) {
            double x, v;
            do {
                x = normal(rnd);
                v = 1 + c * x;
            } while (v <= 0);
            v = v * v * v;
            double u = rnd.nextDouble();
            if (u < 1 - 0.0331 * x * x * x * x) return d * v;
            if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
        }
    }

    static double normal(SplittableRandom rnd) {
        double u1 = 1 - rnd.nextDouble(), u2 = rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }

    public String label() {
        return cv == 1.0 ? "poisson" : "gamma(cv=" + cv + ")";
    }
}
