package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import org.junit.jupiter.api.Test;

class KvCacheBudgetTest {
    /** SmolLM2-135M's shapes: 30 layers, 3 KV heads of 64. */
    private static final ModelConfig SMOL = new ModelConfig(
            "LlamaForCausalLM", 576, 30, 9, 3, 64, 1536, 49152, 8192, 1e-5, 10000.0, true, false, "bfloat16", null);

    @Test
    void sizesTakeVllmsSuffixesAndIecNames() {
        assertThat(KvCacheBudget.parseSize("4096")).isEqualTo(4096);
        assertThat(KvCacheBudget.parseSize("1k")).isEqualTo(1000);
        assertThat(KvCacheBudget.parseSize("1.5g")).isEqualTo(1_500_000_000L);
        assertThat(KvCacheBudget.parseSize("2G")).isEqualTo(2L << 30);
        assertThat(KvCacheBudget.parseSize("2Gi")).isEqualTo(2L << 30);
        assertThat(KvCacheBudget.parseSize("2GiB")).isEqualTo(2L << 30);
        assertThat(KvCacheBudget.parseSize(" 512MiB ")).isEqualTo(512L << 20);
        assertThatThrownBy(() -> KvCacheBudget.parseSize("1.5GiB"))
                .hasMessageContaining("only sizes with k, m, g or t may have decimals");
        assertThatThrownBy(() -> KvCacheBudget.parseSize("2 GB")).hasMessageContaining("is not a size");
        assertThatThrownBy(() -> KvCacheBudget.parseSize("-1")).hasMessageContaining("is not a size");
        assertThatThrownBy(() -> KvCacheBudget.parseSize("99999999999T")).hasMessageContaining("too large");
    }

    @Test
    void aByteBudgetGivesTheWholeBlocksThatFit() throws IOException {
        // 30 layers x 3 heads x 64 x (key, value) x 4 bytes = 46,080 bytes a token, 737,280 a block of 16.
        assertThat(KvCacheBudget.bytesPerBlock(SMOL, 16)).isEqualTo(737_280);
        KvCacheBudget.Plan p = new KvCacheBudget.Bytes(1L << 30).plan(SMOL, 16, 0);
        assertThat(p.blocks()).isEqualTo(1456);
        assertThat(p.bytes()).isLessThanOrEqualTo(1L << 30);
        assertThat(p.describe()).contains("1456 blocks of 16 tokens (23296 tokens");
    }

    @Test
    void aHeapShareTakesTheWeightsAndOneStepFirst() throws IOException {
        long heap = 4L << 30;
        long weights = 270L << 20;
        long step = LlamaExecutor.stepActivationBytes(SMOL, 8192, 256);
        KvCacheBudget.Plan p = new KvCacheBudget.HeapShare(0.9, heap, 8192, 256).plan(SMOL, 16, weights);
        assertThat(p.blocks()).isEqualTo((int) (((long) (0.9 * heap) - weights - step) / 737_280));
        assertThat(p.describe()).contains("--gpu-memory-utilization 0.9 of the 4 GiB max heap");
        assertThatThrownBy(() -> new KvCacheBudget.HeapShare(0.1, 256L << 20, 8192, 256).plan(SMOL, 16, weights))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no room for the KV cache")
                .hasMessageContaining("-Xmx");
    }

    @Test
    void aBudgetBeyondWhatALayerArrayHoldsIsCapped() throws IOException {
        KvCacheBudget.Plan p = new KvCacheBudget.Bytes(1L << 50).plan(SMOL, 16, 0);
        assertThat(p.blocks()).isEqualTo(KvCacheBudget.maxBlocks(SMOL, 16));
        assertThat(p.describe()).contains("capped");
    }
}
