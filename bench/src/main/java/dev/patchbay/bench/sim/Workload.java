package dev.patchbay.bench.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Which adapters a fleet serves and how popular each is, with the engine sizing the workload assumes.
 *
 * @param name        {@code gie-multilora}, {@code zipf} or {@code uniform}
 * @param adapters    adapter names, most popular first
 * @param cumulative  cumulative popularity, same order, last entry 1
 * @param maxLoras    batch slots per replica
 * @param maxCpuLoras adapters kept in host memory per replica
 * @param replicas    replicas in the fleet
 */
public record Workload(
        String name, List<String> adapters, double[] cumulative, int maxLoras, int maxCpuLoras, int replicas) {
    public static final String GIE_MULTILORA = "gie-multilora";
    public static final String ZIPF = "zipf";
    public static final String UNIFORM = "uniform";
    public static final List<String> NAMES = List.of(GIE_MULTILORA, ZIPF, UNIFORM);

    public Workload {
        adapters = List.copyOf(adapters);
        cumulative = cumulative.clone();
        if (adapters.isEmpty() || adapters.size() != cumulative.length) {
            throw new IllegalArgumentException("one popularity per adapter, at least one adapter");
        }
        if (maxLoras < 1) throw new IllegalArgumentException("max_loras must be >= 1, got " + maxLoras);
        if (maxCpuLoras < maxLoras) throw new IllegalArgumentException("max_cpu_loras must be >= max_loras");
        if (replicas < 1) throw new IllegalArgumentException("replicas must be >= 1, got " + replicas);
    }

    /** The Gateway API Inference Extension's multi-LoRA regression workload: 12% x 5, 6% x 5, 2% x 5. */
    public static Workload gieMultilora() {
        double[] shares = new double[15];
        for (int i = 0; i < 15; i++) shares[i] = i < 5 ? 0.12 : i < 10 ? 0.06 : 0.02;
        return of(GIE_MULTILORA, shares, 3, 3, 10);
    }

    /** Adapter k (from 1) has popularity proportional to 1 / k^s. */
    public static Workload zipf(int count, double s) {
        if (count < 1) throw new IllegalArgumentException("adapters must be >= 1, got " + count);
        double[] shares = new double[count];
        for (int k = 0; k < count; k++) shares[k] = 1.0 / Math.pow(k + 1, s);
        return of(ZIPF, shares, 4, 32, 10);
    }

    public static Workload uniform(int count) {
        if (count < 1) throw new IllegalArgumentException("adapters must be >= 1, got " + count);
        double[] shares = new double[count];
        Arrays.fill(shares, 1.0);
        return of(UNIFORM, shares, 4, 32, 10);
    }

    /** The named workload with its defaults; {@code adapterCount} and {@code zipfS} apply where they mean something. */
    public static Workload named(String name, Integer adapterCount, double zipfS) {
        return switch (name) {
            case GIE_MULTILORA -> gieMultilora();
            case ZIPF -> zipf(adapterCount == null ? 1000 : adapterCount, zipfS);
            case UNIFORM -> uniform(adapterCount == null ? 100 : adapterCount);
            default ->
                throw new IllegalArgumentException(
                        "unknown workload '" + name + "'; known: " + String.join(", ", NAMES));
        };
    }

    public Workload withSizing(Integer maxLoras, Integer maxCpuLoras, Integer replicas) {
        int slots = maxLoras == null ? this.maxLoras : maxLoras;
        int host = maxCpuLoras == null ? Math.max(this.maxCpuLoras, slots) : maxCpuLoras;
        return new Workload(name, adapters, cumulative, slots, host, replicas == null ? this.replicas : replicas);
    }

    /** The adapter for a uniform draw {@code u} in [0, 1). */
    public int adapterIndex(double u) {
        int i = Arrays.binarySearch(cumulative, u);
        int idx = i >= 0 ? i + 1 : -i - 1;
        return Math.min(idx, cumulative.length - 1);
    }

    public double share(int index) {
        return cumulative[index] - (index == 0 ? 0 : cumulative[index - 1]);
    }

    private static Workload of(String name, double[] shares, int maxLoras, int maxCpuLoras, int replicas) {
        double total = Arrays.stream(shares).sum();
        double[] cumulative = new double[shares.length];
        double acc = 0;
        List<String> names = new ArrayList<>(shares.length);
        int width = String.valueOf(shares.length - 1).length();
        for (int i = 0; i < shares.length; i++) {
            acc += shares[i] / total;
            cumulative[i] = acc;
            names.add(String.format(Locale.ROOT, "adapter-%0" + width + "d", i));
        }
        cumulative[shares.length - 1] = 1.0;
        return new Workload(name, names, cumulative, maxLoras, maxCpuLoras, replicas);
    }
}
