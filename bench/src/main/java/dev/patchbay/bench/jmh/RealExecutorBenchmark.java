package dev.patchbay.bench.jmh;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import com.github.tjake.jlama.safetensors.prompt.PromptContext;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.ScheduledSequence;
import dev.patchbay.model.LlamaExecutor;
import dev.patchbay.model.LlamaModel;
import dev.patchbay.model.ModelGenerator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Decode throughput of the real executor on a random model of SmolLM2-135M's shapes (hidden 576, 30 layers, 9 heads,
 * 3 KV heads, intermediate 1536, vocab 49152, BF16), 2 threads. Each invocation is one decode step of a whole batch;
 * the {@code tokens} counter gives tokens/s:
 * <ul>
 *   <li>{@code batch1Base}: one sequence on the base model;</li>
 *   <li>{@code batch1BaseF16}: the same, on the same shapes and seed written as F16 (held as F16);</li>
 *   <li>{@code batch16Base}: sixteen sequences on the base model;</li>
 *   <li>{@code batch16AdaptersQv} / {@code batch16AdaptersAll}: sixteen sequences, each with its own rank-16 adapter
 *       on q_proj and v_proj / on all seven projections (LoRA cost = batch16Base over these, minus one);</li>
 *   <li>{@code jlamaBatch1}: Jlama 0.8.4 generating from the same model directory, for comparison.</li>
 * </ul>
 * The model is generated once into {@code -Dpatchbay.bench.model} (default: a folder under java.io.tmpdir), its F16
 * copy beside it (the folder's name with {@code -f16}).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 5)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx6g"})
public class RealExecutorBenchmark {
    static final int THREADS = 2;
    static final int BLOCK_SIZE = 16;
    static final int BLOCKS_PER_SEQUENCE = 16;
    static final int PROMPT = 32;
    static final int RANK = 16;
    static final List<String> QV = List.of("q_proj", "v_proj");
    static final List<String> ALL =
            List.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj");

    static Path modelDir() throws IOException {
        Path dir = Path.of(System.getProperty(
                "patchbay.bench.model",
                Path.of(System.getProperty("java.io.tmpdir"), "patchbay-smollm2-135m")
                        .toString()));
        ModelGenerator.Spec spec = ModelGenerator.Spec.smolLm2();
        if (!Files.exists(dir.resolve("config.json"))) ModelGenerator.writeModel(dir, spec);
        for (List<String> targets : List.of(QV, ALL)) {
            for (int i = 0; i < 16; i++) {
                Path a = adapterDir(dir, targets, i);
                if (!Files.exists(a.resolve(PeftReader.CONFIG_FILE)))
                    ModelGenerator.writeAdapter(a, spec, RANK, 2 * RANK, targets, 100 + i);
            }
        }
        return dir;
    }

    static Path f16ModelDir() throws IOException {
        Path bf16 = modelDir();
        Path dir = bf16.resolveSibling(bf16.getFileName() + "-f16");
        if (!Files.exists(dir.resolve("config.json")))
            ModelGenerator.writeModel(dir, ModelGenerator.Spec.smolLm2().withDtype("F16"));
        return dir;
    }

    static Path adapterDir(Path model, List<String> targets, int i) {
        return model.resolve("adapters-r" + RANK + "-" + String.join("-", targets))
                .resolve("a" + i);
    }

    /** Counts generated tokens, so JMH reports tokens/s beside steps/s. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Tokens {
        public long tokens;
    }

    /** The loaded model, 32 adapters in slots 0-15 (q,v) and 16-31 (all seven), and one decoding batch per case. */
    @State(Scope.Benchmark)
    public static class Patchbay {
        LlamaModel model;
        Decoder batch1;
        Decoder batch16;
        Decoder batch16Qv;
        Decoder batch16All;

        @Setup(Level.Trial)
        public void load() throws IOException, AdapterException {
            Path dir = modelDir();
            model = LlamaModel.load(dir, 4 * 16 * BLOCKS_PER_SEQUENCE, BLOCK_SIZE, 32, THREADS);
            LlamaExecutor ex = model.executor();
            for (int i = 0; i < 16; i++) {
                ex.activate(i, ex.loadAdapter(PeftReader.read("qv" + i, adapterDir(dir, QV, i), model.config(), RANK)));
                ex.activate(
                        16 + i,
                        ex.loadAdapter(PeftReader.read("all" + i, adapterDir(dir, ALL, i), model.config(), RANK)));
            }
            batch1 = new Decoder(ex, 1, 0, -1);
            batch16 = new Decoder(ex, 16, 16, -1);
            batch16Qv = new Decoder(ex, 16, 32, 0);
            batch16All = new Decoder(ex, 16, 48, 16);
        }

        @TearDown(Level.Trial)
        public void close() {
            model.close();
        }
    }

    /** The F16 model and one decoding sequence on it. */
    @State(Scope.Benchmark)
    public static class PatchbayF16 {
        LlamaModel model;
        Decoder batch1;

        @Setup(Level.Trial)
        public void load() throws IOException {
            model = LlamaModel.load(f16ModelDir(), 4 * BLOCKS_PER_SEQUENCE, BLOCK_SIZE, 1, THREADS);
            batch1 = new Decoder(model.executor(), 1, 0, -1);
        }

        @TearDown(Level.Trial)
        public void close() {
            model.close();
        }
    }

    /** A batch of sequences that decode one token per step, wrapping back to the prompt's end when their blocks fill. */
    static final class Decoder {
        private final LlamaExecutor executor;
        private final List<ScheduledSequence> sequences = new ArrayList<>();
        private int[] next;
        private int position = PROMPT;

        Decoder(LlamaExecutor executor, int batch, int firstSequence, int firstSlot) {
            this.executor = executor;
            SamplingParams params = SamplingParams.fixedLength(1 << 20);
            for (int s = 0; s < batch; s++) {
                int[] prompt = new int[PROMPT];
                for (int i = 0; i < PROMPT; i++) prompt[i] = 100 + 37 * s + i;
                int[] blocks = new int[BLOCKS_PER_SEQUENCE];
                for (int b = 0; b < blocks.length; b++) blocks[b] = (firstSequence + s) * BLOCKS_PER_SEQUENCE + b;
                sequences.add(new ScheduledSequence(
                        s,
                        prompt,
                        0,
                        blocks,
                        firstSlot < 0 ? -1 : firstSlot + s,
                        true,
                        params,
                        new SplittableRandom(s),
                        prompt,
                        0));
            }
            next = executor.execute(new Batch(
                            sequences, PROMPT * batch, PROMPT * batch, 0, firstSlot < 0 ? 0 : batch, BLOCK_SIZE))
                    .nextTokens();
        }

        int step() {
            if (position == BLOCK_SIZE * BLOCKS_PER_SEQUENCE) position = PROMPT;
            List<ScheduledSequence> step = new ArrayList<>(sequences.size());
            for (int s = 0; s < sequences.size(); s++) {
                ScheduledSequence q = sequences.get(s);
                step.add(new ScheduledSequence(
                        q.requestId(),
                        new int[] {next[s]},
                        position,
                        q.blockTable(),
                        q.adapterSlot(),
                        true,
                        q.params(),
                        q.rng(),
                        q.prompt(),
                        position - PROMPT + 1));
            }
            int adapters = sequences.get(0).adapterSlot() < 0 ? 0 : sequences.size();
            next = executor.execute(new Batch(step, step.size(), 0, step.size(), adapters, BLOCK_SIZE))
                    .nextTokens();
            position++;
            return step.size();
        }
    }

    @Benchmark
    public int batch1Base(Patchbay p, Tokens t) {
        int n = p.batch1.step();
        t.tokens += n;
        return n;
    }

    @Benchmark
    public int batch1BaseF16(PatchbayF16 p, Tokens t) {
        int n = p.batch1.step();
        t.tokens += n;
        return n;
    }

    @Benchmark
    public int batch16Base(Patchbay p, Tokens t) {
        int n = p.batch16.step();
        t.tokens += n;
        return n;
    }

    @Benchmark
    public int batch16AdaptersQv(Patchbay p, Tokens t) {
        int n = p.batch16Qv.step();
        t.tokens += n;
        return n;
    }

    @Benchmark
    public int batch16AdaptersAll(Patchbay p, Tokens t) {
        int n = p.batch16All.step();
        t.tokens += n;
        return n;
    }

    /** Jlama on the same model directory; it runs on its own thread pool. */
    @State(Scope.Benchmark)
    public static class Jlama {
        AbstractModel model;

        @Setup(Level.Trial)
        public void load() throws IOException {
            model = ModelSupport.loadModel(modelDir().toFile(), DType.F32, DType.I8);
        }

        @TearDown(Level.Trial)
        public void close() {
            model.close();
        }
    }

    /** One generation of up to 64 positions from a one-word prompt; the counter adds the tokens it produced. */
    @Benchmark
    public int jlamaBatch1(Jlama j, Tokens t) {
        var response = j.model.generate(UUID.randomUUID(), PromptContext.of("Hello"), 0.7f, 64, (text, time) -> {});
        t.tokens += response.generatedTokens;
        return response.generatedTokens;
    }
}
