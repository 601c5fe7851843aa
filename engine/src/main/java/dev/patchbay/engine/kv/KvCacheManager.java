package dev.patchbay.engine.kv;

/**
 * The KV cache as blocks of {@code blockSize} tokens. A sequence holds the blocks for the tokens it has
 * computed; blocks come from a free list and go back when the sequence finishes or is preempted.
 * Used from the engine thread only.
 */
public final class KvCacheManager {
    private final int blockSize;
    private final int[] free;
    private int numFree;

    public KvCacheManager(int numBlocks, int blockSize) {
        this.blockSize = blockSize;
        this.free = new int[numBlocks];
        // Hand out low block ids first: deterministic, and easy to read in traces.
        for (int i = 0; i < numBlocks; i++) free[i] = numBlocks - 1 - i;
        this.numFree = numBlocks;
    }

    public int blockSize() {
        return blockSize;
    }

    public int numBlocks() {
        return free.length;
    }

    public int numFree() {
        return numFree;
    }

    public int numUsed() {
        return free.length - numFree;
    }

    /** Blocks a sequence needs in total to hold {@code tokens} tokens. */
    public int blocksFor(int tokens) {
        return (tokens + blockSize - 1) / blockSize;
    }

    public boolean canAllocate(int blocks) {
        return blocks <= numFree;
    }

    public int allocate() {
        if (numFree == 0) throw new IllegalStateException("KV cache exhausted");
        return free[--numFree];
    }

    public void release(int block) {
        if (numFree == free.length) throw new IllegalStateException("block " + block + " released twice");
        free[numFree++] = block;
    }
}
