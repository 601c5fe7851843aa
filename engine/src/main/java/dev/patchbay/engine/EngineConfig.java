package dev.patchbay.engine;

import java.util.Set;

/**
 * Engine settings, named after vLLM's flags.
 *
 * @param servedModelName     the base model's name in the API and the {@code model_name} label
 * @param maxNumSeqs          running requests at most ({@code --max-num-seqs})
 * @param maxNumBatchedTokens tokens per step at most ({@code --max-num-batched-tokens})
 * @param maxModelLen         prompt plus output tokens at most ({@code --max-model-len})
 * @param blockSize           tokens per KV block ({@code --block-size})
 * @param numKvBlocks         KV blocks in the cache
 * @param enablePrefixCaching reuse KV blocks of identical prompt prefixes
 * @param enableLora          serve adapters ({@code --enable-lora})
 * @param maxLoras            batch slots: distinct adapters in one step ({@code --max-loras})
 * @param maxCpuLoras         adapters kept in host memory, slots included ({@code --max-cpu-loras})
 * @param maxLoraRank         largest adapter rank accepted ({@code --max-lora-rank})
 * @param loraDtype           dtype of adapter weights ({@code --lora-dtype}, "auto" = the model's)
 * @param maxWaitingRequests  queued requests at most before new ones are refused
 * @param maxConcurrentAdapterLoads loads from storage in flight at most
 * @param seed                seed of every random stream the engine owns
 * @param maxLogprobs         most log probabilities a request may ask for per position ({@code --max-logprobs});
 *                            -1 for no limit
 */
public record EngineConfig(
        String servedModelName,
        int maxNumSeqs,
        int maxNumBatchedTokens,
        int maxModelLen,
        int blockSize,
        int numKvBlocks,
        boolean enablePrefixCaching,
        boolean enableLora,
        int maxLoras,
        int maxCpuLoras,
        int maxLoraRank,
        String loraDtype,
        int maxWaitingRequests,
        int maxConcurrentAdapterLoads,
        long seed,
        int maxLogprobs) {

    public static final Set<Integer> LEGAL_LORA_RANKS = Set.of(1, 8, 16, 32, 64, 128, 256, 320, 512);

    public EngineConfig {
        require(servedModelName != null && !servedModelName.isBlank(), "served model name must not be empty");
        require(maxNumSeqs >= 1, "max_num_seqs must be >= 1, got " + maxNumSeqs);
        require(maxNumBatchedTokens >= 1, "max_num_batched_tokens must be >= 1, got " + maxNumBatchedTokens);
        require(maxModelLen >= 2, "max_model_len must be >= 2, got " + maxModelLen);
        require(blockSize >= 1 && blockSize <= 1024, "block_size must be in [1, 1024], got " + blockSize);
        require(numKvBlocks >= 1, "the KV cache needs at least one block, got " + numKvBlocks);
        require(maxLoras >= 1, "max_loras must be >= 1, got " + maxLoras);
        require(maxCpuLoras >= maxLoras, "max_cpu_loras (" + maxCpuLoras + ") must be >= max_loras (" + maxLoras + ")");
        require(
                LEGAL_LORA_RANKS.contains(maxLoraRank),
                "max_lora_rank must be one of [1, 8, 16, 32, 64, 128, 256, 320, 512], got " + maxLoraRank);
        require(maxWaitingRequests >= 1, "max waiting requests must be >= 1, got " + maxWaitingRequests);
        require(
                maxConcurrentAdapterLoads >= 1,
                "concurrent adapter loads must be >= 1, got " + maxConcurrentAdapterLoads);
        require(maxLogprobs >= -1, "max_logprobs must be >= -1, got " + maxLogprobs);
        if (loraDtype == null || loraDtype.isBlank()) loraDtype = "auto";
    }

    /** Whether a request may ask for {@code n} log probabilities per position. */
    public boolean allowsLogprobs(int n) {
        return maxLogprobs == -1 || n <= maxLogprobs;
    }

    private static void require(boolean ok, String message) {
        if (!ok) throw new IllegalArgumentException(message);
    }

    /** vLLM's defaults, with {@code max_cpu_loras} = {@code max_loras}. */
    public static Builder builder(String servedModelName) {
        return new Builder(servedModelName);
    }

    public Builder toBuilder() {
        Builder b = new Builder(servedModelName);
        b.maxNumSeqs = maxNumSeqs;
        b.maxNumBatchedTokens = maxNumBatchedTokens;
        b.maxModelLen = maxModelLen;
        b.blockSize = blockSize;
        b.numKvBlocks = numKvBlocks;
        b.enablePrefixCaching = enablePrefixCaching;
        b.enableLora = enableLora;
        b.maxLoras = maxLoras;
        b.maxCpuLoras = maxCpuLoras;
        b.maxLoraRank = maxLoraRank;
        b.loraDtype = loraDtype;
        b.maxWaitingRequests = maxWaitingRequests;
        b.maxConcurrentAdapterLoads = maxConcurrentAdapterLoads;
        b.seed = seed;
        b.maxLogprobs = maxLogprobs;
        return b;
    }

    /** Builds a config; unset {@code maxCpuLoras} follows {@code maxLoras} as in vLLM. */
    public static final class Builder {
        private String servedModelName;
        private int maxNumSeqs = 256;
        private int maxNumBatchedTokens = 8192;
        private int maxModelLen = 4096;
        private int blockSize = 16;
        private int numKvBlocks = 8192;
        private boolean enablePrefixCaching = false;
        private boolean enableLora = false;
        private int maxLoras = 1;
        private Integer maxCpuLoras = null;
        private int maxLoraRank = 16;
        private String loraDtype = "auto";
        private int maxWaitingRequests = 100_000;
        private int maxConcurrentAdapterLoads = 4;
        private long seed = 0;
        private int maxLogprobs = 20;

        private Builder(String servedModelName) {
            this.servedModelName = servedModelName;
        }

        public Builder servedModelName(String v) {
            servedModelName = v;
            return this;
        }

        public Builder maxNumSeqs(int v) {
            maxNumSeqs = v;
            return this;
        }

        public Builder maxNumBatchedTokens(int v) {
            maxNumBatchedTokens = v;
            return this;
        }

        public Builder maxModelLen(int v) {
            maxModelLen = v;
            return this;
        }

        public Builder blockSize(int v) {
            blockSize = v;
            return this;
        }

        public Builder numKvBlocks(int v) {
            numKvBlocks = v;
            return this;
        }

        public Builder enablePrefixCaching(boolean v) {
            enablePrefixCaching = v;
            return this;
        }

        public Builder enableLora(boolean v) {
            enableLora = v;
            return this;
        }

        public Builder maxLoras(int v) {
            maxLoras = v;
            return this;
        }

        public Builder maxCpuLoras(Integer v) {
            maxCpuLoras = v;
            return this;
        }

        public Builder maxLoraRank(int v) {
            maxLoraRank = v;
            return this;
        }

        public Builder loraDtype(String v) {
            loraDtype = v;
            return this;
        }

        public Builder maxWaitingRequests(int v) {
            maxWaitingRequests = v;
            return this;
        }

        public Builder maxConcurrentAdapterLoads(int v) {
            maxConcurrentAdapterLoads = v;
            return this;
        }

        public Builder seed(long v) {
            seed = v;
            return this;
        }

        public Builder maxLogprobs(int v) {
            maxLogprobs = v;
            return this;
        }

        public EngineConfig build() {
            return new EngineConfig(
                    servedModelName,
                    maxNumSeqs,
                    maxNumBatchedTokens,
                    maxModelLen,
                    blockSize,
                    numKvBlocks,
                    enablePrefixCaching,
                    enableLora,
                    maxLoras,
                    maxCpuLoras == null ? maxLoras : maxCpuLoras,
                    maxLoraRank,
                    loraDtype,
                    maxWaitingRequests,
                    maxConcurrentAdapterLoads,
                    seed,
                    maxLogprobs);
        }
    }
}
