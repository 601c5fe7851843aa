package dev.patchbay.engine.sim;

import dev.patchbay.engine.adapter.AdapterSpec;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.Executor;
import dev.patchbay.engine.exec.LoadedAdapter;
import dev.patchbay.engine.exec.ScheduledSequence;
import dev.patchbay.engine.exec.StepResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * An executor without weights: it reports how long each step and load would take under a {@link LatencyModel}
 * and produces text from each request's own seeded random stream (random words, or an echo of the prompt).
 */
public final class SimulatedExecutor implements Executor {
    public enum TextMode { RANDOM, ECHO }

    private final LatencyModel latency;
    private final TextMode mode;
    private final double eosProbability;
    private final SimTokenizer tokenizer;

    /**
     * @param eosProbability chance that a random-text token ends the sequence (ignored with {@code ignore_eos})
     */
    public SimulatedExecutor(LatencyModel latency, TextMode mode, double eosProbability, SimTokenizer tokenizer) {
        if (eosProbability < 0 || eosProbability > 1) throw new IllegalArgumentException("eos probability must be in [0, 1]");
        this.latency = latency;
        this.mode = mode;
        this.eosProbability = eosProbability;
        this.tokenizer = tokenizer;
    }

    public LatencyModel latency() {
        return latency;
    }

    /** Models the load's time, but the weights file must really be there: a deleted adapter fails as it would. */
    @Override
    public LoadedAdapter loadAdapter(AdapterSpec spec) throws IOException {
        Path file = spec.tensors().file();
        if (!Files.isReadable(file) || Files.size(file) < spec.tensors().dataStart() + spec.weightBytes()) {
            throw new IOException(file + ": adapter weights are missing or truncated");
        }
        return new LoadedAdapter(spec, null, spec.weightBytes());
    }

    @Override
    public long modeledLoadNanos(AdapterSpec spec) {
        return latency.loadFromDiskNanos();
    }

    @Override
    public long activate(int slot, LoadedAdapter adapter) {
        return latency.loadIntoSlotNanos();
    }

    @Override
    public void deactivate(int slot) {}

    @Override
    public StepResult execute(Batch batch) {
        int[] next = new int[batch.sequences().size()];
        for (int i = 0; i < next.length; i++) {
            ScheduledSequence s = batch.sequences().get(i);
            next[i] = s.sample() ? nextToken(s) : -1;
        }
        long nanos = latency.stepNanos(batch.numPrefillTokens(), batch.numDecodes(), batch.numAdapters());
        return new StepResult(next, nanos);
    }

    private int nextToken(ScheduledSequence s) {
        boolean mayEnd = !s.params().ignoreEos();
        if (mode == TextMode.ECHO) {
            int k = s.numOutputTokens();
            if (k < s.prompt().length) return s.prompt()[k];
            return mayEnd ? tokenizer.eosTokenId() : s.prompt()[k % s.prompt().length];
        }
        if (mayEnd && s.rng().nextDouble() < eosProbability) return tokenizer.eosTokenId();
        return tokenizer.firstWordId() + s.rng().nextInt(tokenizer.numWords());
    }
}
