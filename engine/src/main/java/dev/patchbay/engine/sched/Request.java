package dev.patchbay.engine.sched;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.RequestListener;
import dev.patchbay.engine.SamplingParams;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.exec.TokenLogprobs;
import java.util.Arrays;
import java.util.random.RandomGenerator;

/** A request inside the engine: its tokens, progress, KV blocks and timing. Owned by the engine thread. */
public final class Request {
    public enum Status { WAITING, RUNNING, FINISHED }

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
    int[] blocks = new int[4];
    int numBlocks;
    /** Prefix hashes of the first {@code numHashes} full blocks of this request's tokens (prefix caching). */
    long[] blockHashes = new long[4];
    int numHashes;
    /** Leading blocks already registered in the prefix cache. */
    int numRegistered;
    private int[] blockTableCopy;
    /** Tokens already emitted to the listener. */
    int numEmitted;
    /** With {@code logprobs} asked for: entry i belongs to output token i (else null). */
    TokenLogprobs[] outputLogprobs;
    /** With {@code prompt_logprobs} asked for: entry p belongs to prompt token p, entry 0 staying null (else null). */
    TokenLogprobs[] promptLogprobs;
    boolean promptLogprobsSent;
    FinishReason finishReason;
    String error;
    OutputText text;

    long queuedNanos = -1;
    long firstScheduledNanos = -1;
    long firstTokenNanos = -1;
    long lastTokenNanos = -1;

    Request(long id, int[] prompt, RegisteredAdapter adapter, SamplingParams params, RequestListener listener,
            RandomGenerator rng, long arrivalNanos) {
        this.id = id;
        this.prompt = prompt;
        this.adapter = adapter;
        this.params = params;
        this.listener = listener;
        this.rng = rng;
        this.arrivalNanos = arrivalNanos;
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
            if (numOutput == outputLogprobs.length) outputLogprobs = Arrays.copyOf(outputLogprobs, outputLogprobs.length * 2);
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

    /** Forgets the shared block table: the blocks were freed (finish or preemption). */
    void clearBlocks() {
        numBlocks = 0;
        blockTableCopy = null;
    }

    void addBlock(int block) {
        if (numBlocks == blocks.length) blocks = Arrays.copyOf(blocks, blocks.length * 2);
        blocks[numBlocks++] = block;
    }

    /** The prefix hash of full block {@code i}, computed on first use. */
    long blockHash(int i, int blockSize) {
        while (numHashes <= i) {
            long previous = numHashes == 0 ? 0 : blockHashes[numHashes - 1];
            int[] tokens = tokensRange(numHashes * blockSize, blockSize);
            if (numHashes == blockHashes.length) blockHashes = Arrays.copyOf(blockHashes, blockHashes.length * 2);
            blockHashes[numHashes] = dev.patchbay.engine.kv.KvCacheManager.chain(previous, tokens, 0, blockSize,
                    adapter == null ? 0 : adapter.id());
            numHashes++;
        }
        return blockHashes[i];
    }

    /**
     * The block table as an exact-length array. It is shared by consecutive steps until a block is added or the
     * blocks are freed (a decode needs a new block only every block_size tokens), so executors must not modify it.
     */
    int[] blockTable() {
        if (blockTableCopy == null || blockTableCopy.length != numBlocks) blockTableCopy = Arrays.copyOf(blocks, numBlocks);
        return blockTableCopy;
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
