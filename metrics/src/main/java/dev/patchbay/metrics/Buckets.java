package dev.patchbay.metrics;

import java.util.ArrayList;
import java.util.List;

/** vLLM's histogram buckets. */
final class Buckets {
    private Buckets() {}

    static final double[] TIME_TO_FIRST_TOKEN = {
        0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
        160.0, 640.0, 2560.0
    };
    static final double[] INTER_TOKEN = {
        0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0
    };
    static final double[] REQUEST_LATENCY = {
        0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0,
        1920.0, 7680.0
    };
    static final double[] ITERATION_TOKENS = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    static final double[] REQUEST_PARAMS_N = {1, 2, 5, 10, 20};
    static final double[] ITERATION_LORA_ADAPTERS = {0, 1, 2, 4, 8, 16, 32, 64};
    /** Adapter loads take from milliseconds (host to slot) to minutes (large adapters from slow storage). */
    static final double[] ADAPTER_LOAD = {
        0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0
    };

    /** vLLM's {@code build_1_2_5_buckets}: 1, 2, 5, 10, 20, 50, ... while the value is at most {@code max}. */
    static double[] oneTwoFive(long max) {
        List<Double> out = new ArrayList<>();
        for (long magnitude = 1; ; magnitude *= 10) {
            for (long mantissa : new long[] {1, 2, 5}) {
                long value = mantissa * magnitude;
                if (value > max)
                    return out.stream().mapToDouble(Double::doubleValue).toArray();
                out.add((double) value);
            }
        }
    }
}
