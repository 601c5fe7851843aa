package dev.patchbay.engine.kv;

import java.util.Arrays;
import java.util.function.IntUnaryOperator;

/**
 * The KV blocks one sequence holds, in position order, and the prefix hashes of its full blocks. Only the
 * {@link KvCacheManager} changes them; everyone else reads. Engine thread only.
 */
public final class SequenceBlocks {
    private final IntUnaryOperator tokenAt;
    private final int adapterId;

    int[] blocks = new int[4];
    int numBlocks;
    /** Leading blocks registered in the prefix cache. */
    int numCached;
    /** Prefix hashes of the first {@code numHashes} full blocks of the sequence's tokens, computed on first use. */
    private long[] hashes = new long[4];

    private int numHashes;
    private int[] tableCopy;

    /**
     * @param tokenAt   the sequence's token at a position (prompt, then output); positions of full blocks never change
     * @param adapterId 0 for the base model: blocks of different adapters never match
     */
    public SequenceBlocks(IntUnaryOperator tokenAt, int adapterId) {
        this.tokenAt = tokenAt;
        this.adapterId = adapterId;
    }

    public int numBlocks() {
        return numBlocks;
    }

    /** The {@code i}-th block held, for invariant checks; executors get {@link #table}. */
    public int blockAt(int i) {
        if (i >= numBlocks) throw new IndexOutOfBoundsException(i + " of " + numBlocks);
        return blocks[i];
    }

    /**
     * The block table as an exact-length array. It is shared by consecutive steps until a block is added or the
     * blocks are freed (a decode needs a new block only every block_size tokens), so executors must not modify it.
     */
    public int[] table() {
        if (tableCopy == null || tableCopy.length != numBlocks) tableCopy = Arrays.copyOf(blocks, numBlocks);
        return tableCopy;
    }

    void add(int block) {
        if (numBlocks == blocks.length) blocks = Arrays.copyOf(blocks, blocks.length * 2);
        blocks[numBlocks++] = block;
    }

    /** Forgets the blocks (they were released) and the shared table; the hashes stay, as the tokens do. */
    void clear() {
        numBlocks = 0;
        numCached = 0;
        tableCopy = null;
    }

    /** The prefix hash of full block {@code i}. */
    long hash(int i, int blockSize) {
        while (numHashes <= i) {
            long previous = numHashes == 0 ? 0 : hashes[numHashes - 1];
            int[] tokens = new int[blockSize];
            for (int t = 0; t < blockSize; t++) tokens[t] = tokenAt.applyAsInt(numHashes * blockSize + t);
            if (numHashes == hashes.length) hashes = Arrays.copyOf(hashes, hashes.length * 2);
            hashes[numHashes] = KvCacheManager.chain(previous, tokens, 0, blockSize, adapterId);
            numHashes++;
        }
        return hashes[i];
    }
}
