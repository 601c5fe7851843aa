package dev.patchbay.engine.kv;

import dev.patchbay.engine.stats.EngineStats;
import java.util.HashMap;
import java.util.Map;

/**
 * The KV cache as blocks of {@code blockSize} tokens, reference counted, and the blocks each sequence holds
 * ({@link SequenceBlocks}, changed only here). A sequence holds the blocks for the tokens it has computed; they go
 * back when it finishes or is preempted. With prefix caching, a full block is also registered under the hash of
 * everything before and in it (its adapter included), and stays findable after release until the block is handed
 * out again: free blocks are reused least recently released first, as in vLLM. A new sequence starts from the
 * longest cached prefix: {@link #cachedPrefix} finds it, {@link #allocateSlots} takes it with the new blocks.
 * Used from the engine thread only.
 */
public final class KvCacheManager {
    private static final int NONE = -1;

    private final int blockSize;
    private final int numBlocks;
    private final boolean prefixCaching;
    private final EngineStats stats;
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

    /**
     * The cached blocks a sequence may start from: {@code numBlocks} full blocks, {@code numFree} of them free
     * (taking those shrinks the free list), found by a lookup of {@code queriedTokens} tokens.
     */
    public record CachedPrefix(int[] blocks, int numBlocks, int numFree, int queriedTokens) {
        /** No lookup was made (prefix caching off, or the sequence must compute every token). */
        public static final CachedPrefix NONE = new CachedPrefix(new int[0], 0, 0, 0);
    }

    public KvCacheManager(int numBlocks, int blockSize, boolean prefixCaching, EngineStats stats) {
        this.blockSize = blockSize;
        this.numBlocks = numBlocks;
        this.prefixCaching = prefixCaching;
        this.stats = stats;
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

    /** Sequences holding {@code block} now, for invariant checks. */
    public int references(int block) {
        return refCount[block];
    }

    /**
     * The longest cached prefix of a sequence's first {@code numTokens} tokens, always leaving one token to compute
     * so the step samples; {@link CachedPrefix#NONE} when prefix caching is off or the sequence already holds blocks.
     */
    public CachedPrefix cachedPrefix(SequenceBlocks seq, int numTokens) {
        if (!prefixCaching || seq.numBlocks > 0) return CachedPrefix.NONE;
        int maxHits = (numTokens - 1) / blockSize;
        int[] hits = new int[maxHits];
        int numHits = 0, freeHits = 0;
        while (numHits < maxHits) {
            Integer b = cached.get(seq.hash(numHits, blockSize));
            if (b == null) break;
            if (refCount[b] == 0) freeHits++;
            hits[numHits++] = b;
        }
        return new CachedPrefix(hits, numHits, freeHits, numTokens);
    }

    /**
     * Gives a sequence the blocks to hold {@code totalTokens} tokens: first those of {@code prefix} (found for it by
     * {@link #cachedPrefix}, or {@link CachedPrefix#NONE}), then fresh ones. Returns false, taking nothing, when they
     * do not fit in the free blocks.
     */
    public boolean allocateSlots(SequenceBlocks seq, CachedPrefix prefix, int totalTokens) {
        int need = blocksFor(totalTokens) - seq.numBlocks - prefix.numBlocks();
        if (need + prefix.numFree() > numFree) return false;
        for (int i = 0; i < prefix.numBlocks(); i++) {
            int b = prefix.blocks()[i];
            if (refCount[b] == 0) unlink(b);
            refCount[b]++;
            seq.add(b);
        }
        if (prefix.queriedTokens() > 0) {
            seq.numCached = prefix.numBlocks();
            stats.prefixCacheLookup(prefix.queriedTokens(), (long) prefix.numBlocks() * blockSize);
        }
        for (int i = 0; i < need; i++) seq.add(allocate());
        return true;
    }

    /** Releases every block of a sequence (finish or preemption). */
    public void free(SequenceBlocks seq) {
        for (int i = 0; i < seq.numBlocks; i++) release(seq.blocks[i]);
        seq.clear();
    }

    /** Registers the sequence's blocks that {@code numComputed} tokens have filled in the prefix cache. */
    public void cacheFullBlocks(SequenceBlocks seq, int numComputed) {
        if (!prefixCaching) return;
        int full = Math.min(numComputed / blockSize, seq.numBlocks);
        while (seq.numCached < full) {
            register(seq.blocks[seq.numCached], seq.hash(seq.numCached, blockSize));
            seq.numCached++;
        }
    }

    /** Hands out the least recently released free block, forgetting what it cached. */
    private int allocate() {
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

    private void release(int block) {
        if (refCount[block] <= 0) throw new IllegalStateException("block " + block + " released twice");
        if (--refCount[block] == 0) append(block);
    }

    /** Registers a block that now holds a full block of tokens under their prefix hash. */
    private void register(int block, long hash) {
        if (hashed[block]) return;
        hashed[block] = true;
        hashOf[block] = hash;
        cached.putIfAbsent(hash, block);
    }

    /** The hash of a full block, chained on the previous block's hash so equal hashes mean equal prefixes. */
    static long chain(long previous, int[] tokens, int from, int count, int adapterId) {
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
