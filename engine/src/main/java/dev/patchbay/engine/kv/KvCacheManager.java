package dev.patchbay.engine.kv;

import java.util.HashMap;
import java.util.Map;

/**
 * The KV cache as blocks of {@code blockSize} tokens, reference counted. A sequence holds the blocks for the
 * tokens it has computed; they go back when it finishes or is preempted. With prefix caching, a full block is
 * also registered under the hash of everything before and in it (its adapter included), and stays findable
 * after release until the block is handed out again: free blocks are reused least recently released first,
 * as in vLLM. Used from the engine thread only.
 */
public final class KvCacheManager {
    private static final int NONE = -1;

    private final int blockSize;
    private final int numBlocks;
    private final int[] refCount;
    private final long[] hashOf;
    private final boolean[] hashed;
    private final Map<Long, Integer> cached = new HashMap<>();
    // Free blocks as a doubly linked list (head = next to reuse), so a cached free block can leave it in O(1).
    private final int[] prev;
    private final int[] next;
    private int head = NONE;
    private int tail = NONE;
    private int numFree;

    public KvCacheManager(int numBlocks, int blockSize) {
        this.blockSize = blockSize;
        this.numBlocks = numBlocks;
        this.refCount = new int[numBlocks];
        this.hashOf = new long[numBlocks];
        this.hashed = new boolean[numBlocks];
        this.prev = new int[numBlocks];
        this.next = new int[numBlocks];
        for (int b = 0; b < numBlocks; b++) append(b); // low ids first: deterministic and easy to read in traces
    }

    public int blockSize() {
        return blockSize;
    }

    public int numBlocks() {
        return numBlocks;
    }

    /** Blocks no sequence holds (cached ones included: they can be reused at any time). */
    public int numFree() {
        return numFree;
    }

    public int numUsed() {
        return numBlocks - numFree;
    }

    /** Blocks a sequence needs in total to hold {@code tokens} tokens. */
    public int blocksFor(int tokens) {
        return (tokens + blockSize - 1) / blockSize;
    }

    public boolean canAllocate(int blocks) {
        return blocks <= numFree;
    }

    /** Hands out the least recently released free block, forgetting what it cached. */
    public int allocate() {
        if (head == NONE) throw new IllegalStateException("KV cache exhausted");
        int b = head;
        unlink(b);
        if (hashed[b]) {
            cached.remove(hashOf[b], b);
            hashed[b] = false;
        }
        refCount[b] = 1;
        return b;
    }

    public void release(int block) {
        if (refCount[block] <= 0) throw new IllegalStateException("block " + block + " released twice");
        if (--refCount[block] == 0) append(block);
    }

    /** The cached block holding exactly the tokens summed up by {@code hash}, or -1. */
    public int lookup(long hash) {
        Integer b = cached.get(hash);
        return b == null ? NONE : b;
    }

    /** Whether taking {@code block} would remove it from the free list. */
    public boolean isFree(int block) {
        return refCount[block] == 0;
    }

    /** Takes one more reference to a cached block found by {@link #lookup}. */
    public void share(int block) {
        if (refCount[block] == 0) unlink(block);
        refCount[block]++;
    }

    /** Registers a block that now holds a full block of tokens under their prefix hash. */
    public void register(int block, long hash) {
        if (hashed[block]) return;
        hashed[block] = true;
        hashOf[block] = hash;
        cached.putIfAbsent(hash, block);
    }

    /** The hash of a full block, chained on the previous block's hash so equal hashes mean equal prefixes. */
    public static long chain(long previous, int[] tokens, int from, int count, int adapterId) {
        long h = previous * 0x9E3779B97F4A7C15L + adapterId;
        for (int i = 0; i < count; i++) h = (h ^ tokens[from + i]) * 0xBF58476D1CE4E5B9L + (h >>> 29);
        return h ^ (h >>> 31);
    }

    private void append(int b) {
        prev[b] = tail;
        next[b] = NONE;
        if (tail == NONE) head = b;
        else next[tail] = b;
        tail = b;
        numFree++;
    }

    private void unlink(int b) {
        if (prev[b] == NONE) head = next[b];
        else next[prev[b]] = next[b];
        if (next[b] == NONE) tail = prev[b];
        else prev[next[b]] = prev[b];
        numFree--;
    }
}
