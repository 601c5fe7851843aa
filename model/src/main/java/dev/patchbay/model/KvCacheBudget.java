package dev.patchbay.model;

import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * How large the CPU executor's KV cache is: a set number of blocks, a set size in bytes, or a share of the JVM's
 * maximum heap ({@code -Xmx}) for the model as a whole, vLLM's {@code gpu_memory_utilization} on the CPU. With a
 * share, the weights and the activations of one full step are taken from it first and the KV cache gets the rest;
 * what the share leaves of the heap is for adapters, requests and the server itself.
 */
public sealed interface KvCacheBudget {
    /** Exactly {@code count} blocks ({@code --num-gpu-blocks-override}). */
    record Blocks(int count) implements KvCacheBudget {}

    /** As many blocks as fit in {@code bytes} ({@code --kv-cache-memory-bytes}). */
    record Bytes(long bytes) implements KvCacheBudget {}

    /**
     * What {@code utilization} of {@code maxHeapBytes} leaves after the weights and one step's activations
     * ({@code --gpu-memory-utilization}).
     *
     * @param maxStepTokens    tokens one step may process ({@code --max-num-batched-tokens})
     * @param maxStepSequences sequences one step may sample for ({@code --max-num-seqs})
     */
    record HeapShare(double utilization, long maxHeapBytes, int maxStepTokens, int maxStepSequences)
            implements KvCacheBudget {}

    /** The cache a budget comes to for one model: its blocks, their bytes, and how they were arrived at. */
    record Plan(int blocks, int blockSize, long bytesPerBlock, String reason) {
        public long bytes() {
            return blocks * bytesPerBlock;
        }

        /** One line for the start-up log. */
        public String describe() {
            return "KV cache: " + blocks + " blocks of " + blockSize + " tokens (" + (long) blocks * blockSize
                    + " tokens, " + formatBytes(bytes()) + ", " + formatBytes(bytesPerBlock) + " per block); " + reason;
        }
    }

    /** Keys and values of one block over all layers, held as F32. */
    static long bytesPerBlock(ModelConfig c, int blockSize) {
        return 2L * c.numLayers() * c.numKvHeads() * c.headDim() * Float.BYTES * blockSize;
    }

    /** Most blocks a layer's cache can hold: each is one Java array. */
    static int maxBlocks(ModelConfig c, int blockSize) {
        return (int) Math.min(
                Integer.MAX_VALUE, (Integer.MAX_VALUE - 16L) / ((long) blockSize * c.numKvHeads() * c.headDim()));
    }

    /**
     * The blocks this budget gives a model of {@code config} whose weights take {@code weightBytes}; an IOException
     * with the numbers when not even one block fits.
     */
    default Plan plan(ModelConfig config, int blockSize, long weightBytes) throws IOException {
        long perBlock = bytesPerBlock(config, blockSize);
        int max = maxBlocks(config, blockSize);
        long blocks;
        String reason;
        switch (this) {
            case Blocks b -> {
                blocks = b.count();
                reason = "set by --num-gpu-blocks-override";
                if (blocks < 1) throw new IOException("--num-gpu-blocks-override must be at least 1, got " + blocks);
                if (blocks > max) {
                    throw new IOException("--num-gpu-blocks-override " + blocks + " exceeds the " + max + " blocks of "
                            + blockSize + " tokens a layer's cache can hold");
                }
            }
            case Bytes b -> {
                blocks = b.bytes() / perBlock;
                reason = "--kv-cache-memory-bytes " + formatBytes(b.bytes());
            }
            case HeapShare h -> {
                long share = (long) (h.utilization() * h.maxHeapBytes());
                long activations = LlamaExecutor.stepActivationBytes(config, h.maxStepTokens(), h.maxStepSequences());
                long left = share - weightBytes - activations;
                blocks = Math.max(0, left) / perBlock;
                reason = String.format(
                        Locale.ROOT,
                        "--gpu-memory-utilization %s of the %s max heap (%s) less %s of weights"
                                + " and %s for one step's activations",
                        new BigDecimal(h.utilization())
                                .round(new MathContext(3))
                                .stripTrailingZeros()
                                .toPlainString(),
                        formatBytes(h.maxHeapBytes()),
                        formatBytes(share),
                        formatBytes(weightBytes),
                        formatBytes(activations));
            }
        }
        if (blocks < 1) {
            throw new IOException("no room for the KV cache: " + reason + " leaves less than one block of "
                    + formatBytes(perBlock) + "; give the JVM more heap (-Xmx), raise --gpu-memory-utilization,"
                    + " lower --max-num-batched-tokens or set --kv-cache-memory-bytes");
        }
        if (blocks > max) {
            blocks = max;
            reason += ", capped at the most a layer's cache can hold";
        }
        return new Plan((int) blocks, blockSize, perBlock, reason);
    }

    /** Bytes in binary units, e.g. {@code 1.5 GiB}, {@code 512 KiB}, {@code 100 B}. */
    static String formatBytes(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        if (u == 0) return bytes + " B";
        return (v == Math.rint(v) ? String.valueOf((long) v) : String.format(Locale.ROOT, "%.1f", v)) + " " + units[u];
    }

    /**
     * Parses a size as vLLM's {@code --kv-cache-memory-bytes} takes it, plus IEC names: a whole number of bytes;
     * with {@code k m g t} powers of 1000 (decimals allowed, as {@code 1.5g}); with {@code K M G T}, {@code Ki Mi Gi Ti}
     * or {@code KiB MiB GiB TiB} powers of 1024 (whole numbers only).
     */
    static long parseSize(String text) {
        String s = text.strip();
        var m = Pattern.compile("(\\d+(?:\\.\\d+)?)([kmgt]|[KMGT](?:iB|i)?)?").matcher(s);
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "'" + text + "' is not a size: use bytes, or a number with k, m, g, t"
                            + " (powers of 1000) or K, M, G, T, Ki, Mi, Gi, Ti, KiB, MiB, GiB, TiB (powers of 1024), as 2GiB or 512M");
        }
        String number = m.group(1);
        String suffix = m.group(2) == null ? "" : m.group(2);
        int power = suffix.isEmpty() ? 0 : "KMGT".indexOf(Character.toUpperCase(suffix.charAt(0))) + 1;
        boolean decimal = !suffix.isEmpty() && Character.isLowerCase(suffix.charAt(0));
        if (decimal) {
            double v = Double.parseDouble(number) * Math.pow(1000, power);
            if (v >= Long.MAX_VALUE) throw new IllegalArgumentException("'" + text + "' is too large");
            return (long) v;
        }
        if (number.contains(".")) {
            throw new IllegalArgumentException("'" + text + "': only sizes with k, m, g or t may have decimals");
        }
        try {
            return Math.multiplyExact(Long.parseLong(number), 1L << (10 * power));
        } catch (ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is too large");
        }
    }
}
