package dev.patchbay.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.ScheduledSequence;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Patchbay's side of {@code scripts/llama-cpp.sh bench}: on a SmolLM2-135M-shaped BF16 model (generated, written to the
 * model directory if missing), the median of several repeats of
 *
 * <ul>
 *   <li>decode at batch 1 (64 steps after a 32-token prompt);
 *   <li>prompt processing of one 512-token prompt in one step;
 *   <li>decode at batch 16 on the base model, with 16 different rank-16 adapters on all seven projections, and with 16
 *       adapters on one projection at a time (what each projection's LoRA costs);
 * </ul>
 *
 * and the process's resident memory with the base model (before the adapters are loaded) and with them. Prints one JSON object on its last line. Run with the model module's test
 * class path and {@code --add-modules jdk.incubator.vector}; args: model dir, threads, repeats, and for a profiler
 * {@code decode-only} or {@code prompt-only}.
 */
public final class CpuBenchMain {
    private static final int DECODE_STEPS = 64;
    private static final int BATCH_STEPS = 16;
    private static final int PROMPT = 512;
    private static final int BLOCK = 16;

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        int repeats = Integer.parseInt(args[2]);
        ModelGenerator.Spec spec = ModelGenerator.Spec.smolLm2();
        if (!Files.exists(dir.resolve("model.safetensors"))) ModelGenerator.writeModel(dir, spec);
        List<List<String>> targetSets = new ArrayList<>();
        targetSets.add(LoraWeights.PROJECTIONS);
        for (String p : LoraWeights.PROJECTIONS) targetSets.add(List.of(p));
        // 16 sequences of 8 blocks for the batches, 32 more for the 512-token prompt.
        try (LlamaModel model = LlamaModel.load(dir, 16 * 8 + PROMPT / BLOCK, BLOCK, 16 * targetSets.size(), threads)) {
            LlamaExecutor ex = model.executor();
            if (args.length > 3) {
                // For a profiler: batch-1 decode or the 512-token prompt and nothing else, as many times as asked.
                for (int r = 0; r < repeats; r++) {
                    if (args[3].equals("decode-only"))
                        System.err.printf("decode %.1f tokens/s%n", RealExecutorMain.decode(ex, 1, -1, DECODE_STEPS));
                    else System.err.printf("prompt %.1f tokens/s%n", prompt(ex));
                }
                return;
            }
            long weightBytes = model.weightBytesByDtype().values().stream()
                    .mapToLong(Long::longValue)
                    .sum();
            // Warm-up: C2 compiles the kernels for every shape before anything is timed.
            RealExecutorMain.decode(ex, 1, -1, 16);
            prompt(ex);
            double[] decode = new double[repeats], prompt = new double[repeats];
            for (int r = 0; r < repeats; r++) {
                decode[r] = RealExecutorMain.decode(ex, 1, -1, DECODE_STEPS);
                prompt[r] = prompt(ex);
                System.err.printf(
                        "patchbay repeat %d: decode %.1f, prompt %.1f tokens/s (load %s)%n",
                        r, decode[r], prompt[r], loadAverage());
            }
            // Resident memory with the base model alone, as llama.cpp holds it; the adapters come after.
            long rss = status("VmRSS"), peakRss = status("VmHWM");

            for (int set = 0; set < targetSets.size(); set++) {
                List<String> targets = targetSets.get(set);
                for (int i = 0; i < 16; i++) {
                    Path a = dir.resolve("bench-adapters/" + String.join("-", targets) + "/a" + i);
                    if (!Files.exists(a.resolve(PeftReader.CONFIG_FILE)))
                        ModelGenerator.writeAdapter(a, spec, 16, 32, targets, 100 + i);
                    ex.activate(set * 16 + i, ex.loadAdapter(PeftReader.read("a" + i, a, model.config(), 16)));
                }
            }
            RealExecutorMain.decode(ex, 16, 0, 4);
            double[] base16 = new double[repeats], lora16 = new double[repeats];
            double[][] perProjection = new double[LoraWeights.PROJECTIONS.size()][repeats];
            for (int r = 0; r < repeats; r++) {
                base16[r] = RealExecutorMain.decode(ex, 16, -1, BATCH_STEPS);
                lora16[r] = RealExecutorMain.decode(ex, 16, 0, BATCH_STEPS);
                for (int p = 0; p < perProjection.length; p++)
                    perProjection[p][r] = RealExecutorMain.decode(ex, 16, 16 * (p + 1), BATCH_STEPS);
                System.err.printf(
                        "patchbay repeat %d: batch 16 %.1f, with 16 adapters on all 7 %.1f tokens/s (load %s)%n",
                        r, base16[r], lora16[r], loadAverage());
            }
            ObjectMapper json = new ObjectMapper();
            ObjectNode out = json.createObjectNode();
            out.put("threads", threads);
            out.put("repeats", repeats);
            out.put("weight_bytes", weightBytes);
            out.put("decode_tps", median(decode));
            out.put("prompt_tps", median(prompt));
            out.put("batch16_base_tps", median(base16));
            out.put("batch16_lora_tps", median(lora16));
            ObjectNode proj = out.putObject("batch16_one_projection_tps");
            for (int p = 0; p < perProjection.length; p++)
                proj.put(LoraWeights.PROJECTIONS.get(p), median(perProjection[p]));
            ArrayNode raw = out.putArray("decode_all");
            for (double d : decode) raw.add(d);
            out.put("rss_bytes", rss);
            out.put("peak_rss_bytes", peakRss);
            out.put("rss_with_adapters_bytes", status("VmRSS"));
            System.out.println(json.writeValueAsString(out));
        }
    }

    private static String loadAverage() throws java.io.IOException {
        return Files.readString(Path.of("/proc/loadavg")).trim();
    }

    /** Tokens per second of one 512-token prompt processed in one step (its KV blocks after the batches'). */
    static double prompt(LlamaExecutor ex) {
        int[] prompt = new int[PROMPT];
        for (int i = 0; i < PROMPT; i++) prompt[i] = 100 + (i * 37) % 20000;
        int[] blocks = Steps.range(16 * 8, PROMPT / BLOCK);
        ScheduledSequence seq = new ScheduledSequence(
                0, prompt, 0, blocks, -1, true, SamplingParams.fixedLength(1), new SplittableRandom(0), prompt, 0);
        long start = System.nanoTime();
        ex.execute(new Batch(List.of(seq), PROMPT, PROMPT, 0, 0, BLOCK));
        return PROMPT / ((System.nanoTime() - start) / 1e9);
    }

    static double median(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /** A /proc/self/status field in bytes (VmRSS: resident now, VmHWM: its peak). */
    static long status(String field) throws java.io.IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(field + ":")) return 1024 * Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
        return -1;
    }
}
