package dev.patchbay.engine.sched;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.RequestListener;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.exec.TokenLogprobs;
import dev.patchbay.engine.kv.SequenceBlocks;
import java.util.Arrays;
import java.util.random.RandomGenerator;

/** A request inside the engine: its tokens, progress, KV blocks and timing. Owned by the engine thread. */
public final class Request {
    public enum Status {
        WAITING,
        RUNNING,
        FINISHED
    }

    final long id;
    final int[] prompt;
    final RegisteredAdapter adapter;
    final SamplingParams params;
    final RequestListener listener;
    final RandomGenerator rng;
    final long arrivalNanos;

    Status status = Status.WAITING;
    int[] output = new int[16];
    int numOutput;
    /** Tokens whose KV is in the cache; reset to 0 by preemption (recompute). */
    int numComputed;
    /** The KV blocks it holds; the KV cache manager changes them. */
    final SequenceBlocks blocks;
    /** Tokens already emitted to the listener. */
    int numEmitted;
    /** With {@code logprobs} asked for: entry i belongs to output token i (else null). */
    TokenLogprobs[] outputLogprobs;
    /** With {@code prompt_logprobs} asked for: entry p belongs to prompt token p, entry 0 staying null (else null). */
    TokenLogprobs[] promptLogprobs;

    boolean promptLogprobsSent;
    /** Waiting and deferred: the last schedule pass that reached it skipped it for its adapter (the scheduler's). */
    boolean deferred;

    FinishReason finishReason;
    String error;
    OutputText text;

    long queuedNanos = -1;
    long firstScheduledNanos = -1;
    long firstTokenNanos = -1;
    long lastTokenNanos = -1;

    Request(
            long id,
            int[] prompt,
            RegisteredAdapter adapter,
            SamplingParams params,
            RequestListener listener,
            RandomGenerator rng,
            long arrivalNanos) {
        this.id = id;
        this.prompt = prompt;
        this.adapter = adapter;
        this.params = params;
        this.listener = listener;
        this.rng = rng;
        this.arrivalNanos = arrivalNanos;
        this.blocks = new SequenceBlocks(this::tokenAt, adapter == null ? 0 : adapter.id());
        if (params.logprobs() != null) outputLogprobs = new TokenLogprobs[16];
        if (params.promptLogprobs() != null) promptLogprobs = new TokenLogprobs[prompt.length];
    }

    public long id() {
        return id;
    }

    public Status status() {
        return status;
    }

    public RegisteredAdapter adapter() {
        return adapter;
    }

    int numTokens() {
        return prompt.length + numOutput;
    }

    int tokenAt(int i) {
        return i < prompt.length ? prompt[i] : output[i - prompt.length];
    }

    void appendOutput(int token, TokenLogprobs logprobs) {
        if (numOutput == output.length) output = Arrays.copyOf(output, output.length * 2);
        if (outputLogprobs != null) {
            if (numOutput == outputLogprobs.length)
                outputLogprobs = Arrays.copyOf(outputLogprobs, outputLogprobs.length * 2);
            outputLogprobs[numOutput] = logprobs;
        }
        output[numOutput++] = token;
    }

    /**
     * Records the prompt log probabilities a step computed, entry j for prompt position {@code start + 1 + j};
     * positions already known (computed again after a preemption) keep their first value.
     */
    void recordPromptLogprobs(int start, TokenLogprobs[] entries) {
        if (promptLogprobs == null || entries == null) return;
        for (int j = 0; j < entries.length && start + 1 + j < prompt.length; j++) {
            if (promptLogprobs[start + 1 + j] == null) promptLogprobs[start + 1 + j] = entries[j];
        }
    }

    int[] tokensRange(int from, int count) {
        int[] t = new int[count];
        for (int i = 0; i < count; i++) t[i] = tokenAt(from + i);
        return t;
    }

    @Override
    public String toString() {
        return "Request[" + id + " " + status + " adapter=" + (adapter == null ? "-" : adapter.name()) + "]";
    }
}
