package dev.patchbay.engine.sim;

import dev.patchbay.engine.adapter.AdapterSpec;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.Executor;
import dev.patchbay.engine.exec.LoadedAdapter;
import dev.patchbay.engine.exec.ScheduledSequence;
import dev.patchbay.engine.exec.StepResult;
import dev.patchbay.engine.exec.TokenLogprobs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * An executor without weights: it reports how long each step and load would take under a {@link LatencyModel}
 * and produces text from each request's own seeded random stream (random words, or an echo of the prompt).
 * Log probabilities, where asked for, come from {@link SimLogits}.
 */
public final class SimulatedExecutor implements Executor {
    public enum TextMode {
        RANDOM,
        ECHO
    }

    private final LatencyModel latency;
    private final TextMode mode;
    private final double eosProbability;
    private final SimTokenizer tokenizer;

    /**
     * @param eosProbability chance that a random-text token ends the sequence (ignored with {@code ignore_eos})
     */
    public SimulatedExecutor(LatencyModel latency, TextMode mode, double eosProbability, SimTokenizer tokenizer) {
        if (eosProbability < 0 || eosProbability > 1)
            throw new IllegalArgumentException("eos probability must be in [0, 1]");
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
        int size = batch.sequences().size();
        int[] next = new int[size];
        TokenLogprobs[] sampleLogprobs = null;
        TokenLogprobs[][] promptLogprobs = null;
        for (int i = 0; i < size; i++) {
            ScheduledSequence s = batch.sequences().get(i);
            next[i] = s.sample() ? nextToken(s) : -1;
            Integer n = s.params().logprobs();
            if (s.sample() && n != null) {
                if (sampleLogprobs == null) sampleLogprobs = new TokenLogprobs[size];
                int last = s.startPosition() + s.tokens().length;
                sampleLogprobs[i] =
                        SimLogits.logprobs(tokenizer.vocabSize(), last, s.tokens()[s.tokens().length - 1], next[i], n);
            }
            if (s.params().promptLogprobs() != null) {
                if (promptLogprobs == null) promptLogprobs = new TokenLogprobs[size][];
                promptLogprobs[i] = promptLogprobs(s);
            }
        }
        long nanos = latency.stepNanos(batch.numPrefillTokens(), batch.numDecodes(), batch.numAdapters());
        return new StepResult(next, nanos, sampleLogprobs, promptLogprobs);
    }

    private TokenLogprobs[] promptLogprobs(ScheduledSequence s) {
        TokenLogprobs[] out = new TokenLogprobs[StepResult.promptPositions(s)];
        int[] prompt = s.prompt();
        for (int j = 0; j < out.length; j++) {
            int p = s.startPosition() + 1 + j;
            out[j] = SimLogits.logprobs(
                    tokenizer.vocabSize(),
                    p,
                    prompt[p - 1],
                    prompt[p],
                    s.params().promptLogprobs());
        }
        return out;
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
