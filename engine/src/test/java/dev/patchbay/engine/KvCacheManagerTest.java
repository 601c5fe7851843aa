package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.kv.KvCacheManager;
import dev.patchbay.engine.kv.KvCacheManager.CachedPrefix;
import dev.patchbay.engine.kv.SequenceBlocks;
import dev.patchbay.engine.stats.EngineStats;
import org.junit.jupiter.api.Test;

/** The KV cache manager on its own: all-or-nothing slots, and prefix lookup over released blocks. */
class KvCacheManagerTest {
    private final EngineStats stats = new EngineStats();

    /** A sequence whose token at position i is {@code salt + i}. */
    private static SequenceBlocks sequence(int salt, int adapterId) {
        return new SequenceBlocks(i -> salt + i, adapterId);
    }

    @Test
    void slotsThatDoNotFitTakeNothing() {
        KvCacheManager kv = new KvCacheManager(4, 4, false, stats);
        SequenceBlocks a = sequence(0, 0);
        assertThat(kv.allocateSlots(a, CachedPrefix.NONE, 12)).isTrue();
        SequenceBlocks b = sequence(100, 0);
        assertThat(kv.allocateSlots(b, CachedPrefix.NONE, 8)).isFalse();
        assertThat(b.numBlocks()).isZero();
        assertThat(kv.numFree()).isEqualTo(1);
        // Growing a to 16 tokens needs exactly the one block left.
        assertThat(kv.allocateSlots(a, CachedPrefix.NONE, 16)).isTrue();
        assertThat(a.table()).containsExactly(0, 1, 2, 3);
        kv.free(a);
        assertThat(kv.numFree()).isEqualTo(4);
        assertThat(a.numBlocks()).isZero();
    }

    @Test
    void aReleasedSequencesFullBlocksStartTheNextOneWithTheSameTokens() {
        KvCacheManager kv = new KvCacheManager(4, 4, true, stats);
        SequenceBlocks first = sequence(0, 0);
        assertThat(kv.allocateSlots(first, kv.cachedPrefix(first, 12), 12)).isTrue();
        kv.cacheFullBlocks(first, 12);
        int[] firstBlocks = first.table().clone();
        kv.free(first);

        SequenceBlocks second = sequence(0, 0);
        CachedPrefix prefix = kv.cachedPrefix(second, 13);
        assertThat(prefix.numBlocks()).isEqualTo(3);
        assertThat(prefix.numFree()).as("all three wait in the free list").isEqualTo(3);
        assertThat(kv.allocateSlots(second, prefix, 13)).isTrue();
        assertThat(second.table()).hasSize(4).startsWith(firstBlocks);
        assertThat(kv.numFree()).isZero();
        assertThat(stats.counters().prefixCache().queries()).isEqualTo(12 + 13);
        assertThat(stats.counters().prefixCache().hits()).isEqualTo(12);
    }

    @Test
    void theLookupLeavesOneTokenToComputeAndNeverCrossesAdapters() {
        KvCacheManager kv = new KvCacheManager(8, 4, true, stats);
        SequenceBlocks first = sequence(0, 7);
        kv.allocateSlots(first, CachedPrefix.NONE, 12);
        kv.cacheFullBlocks(first, 12);
        assertThat(kv.cachedPrefix(sequence(0, 7), 12).numBlocks())
                .as("12 tokens: the last block is computed")
                .isEqualTo(2);
        assertThat(kv.cachedPrefix(sequence(0, 7), 13).numBlocks()).isEqualTo(3);
        assertThat(kv.cachedPrefix(sequence(0, 8), 13).numBlocks())
                .as("another adapter")
                .isZero();
        assertThat(kv.cachedPrefix(sequence(1, 7), 13).numBlocks())
                .as("other tokens")
                .isZero();
        assertThat(kv.cachedPrefix(first, 13))
                .as("a sequence that holds blocks")
                .isSameAs(CachedPrefix.NONE);
    }

    @Test
    void aBlockHandedOutAgainIsNoLongerFound() {
        KvCacheManager kv = new KvCacheManager(3, 4, true, stats);
        SequenceBlocks first = sequence(0, 0);
        kv.allocateSlots(first, CachedPrefix.NONE, 8);
        kv.cacheFullBlocks(first, 8);
        kv.free(first);
        // Three fresh blocks: the least recently released first, so both of first's blocks are reused.
        SequenceBlocks other = sequence(50, 0);
        assertThat(kv.allocateSlots(other, CachedPrefix.NONE, 12)).isTrue();
        kv.free(other);
        assertThat(kv.cachedPrefix(sequence(0, 0), 9).numBlocks()).isZero();
    }
}
