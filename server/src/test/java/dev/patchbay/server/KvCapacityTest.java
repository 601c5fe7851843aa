package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.model.LlamaExecutor;
import dev.patchbay.model.ModelGenerator;
import dev.patchbay.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A generated model served without {@code --num-gpu-blocks-override}: the engine plans exactly the blocks the CPU
 * executor sized from its memory budget, so every block id the engine hands out exists in the executor's cache.
 */
class KvCapacityTest {
    /** Tiny spec: 2 layers x 2 KV heads x 16 dims x (key, value) x 4 bytes = 512 bytes a token. */
    private static final int BYTES_PER_TOKEN = 512;

    private static final int BLOCK_SIZE = 4;
    private static final int BLOCKS = 24;

    @TempDir
    Path dir;

    Path model;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void writeModel() throws Exception {
        model = dir.resolve("tiny");
        ModelGenerator.writeModel(model, ModelGenerator.Spec.tiny());
    }

    private PatchbayServer start(String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--model",
                model.toString(),
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--block-size",
                Integer.toString(BLOCK_SIZE)));
        args.addAll(List.of(extra));
        return PatchbayServer.start(ServeCommand.parse(args.toArray(String[]::new)));
    }

    private HttpResponse<String> post(PatchbayServer s, String path, String body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
                        .timeout(Duration.ofSeconds(60))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A greedy completion of 8 tokens; returns the blocks its tokens occupied in the cache. */
    private int complete(PatchbayServer s, int i) throws Exception {
        String prompt = "request " + i + " asks the model about the quick brown fox";
        HttpResponse<String> r = post(
                s,
                "/v1/completions",
                "{\"prompt\": \"" + prompt + "\", \"max_tokens\": 8," + " \"temperature\": 0, \"ignore_eos\": true}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode usage = ServerHarness.json(r).get("usage");
        assertThat(usage.get("completion_tokens").asInt()).isEqualTo(8);
        // The last sampled token is never fed back, so it takes no cache slot.
        int cached = usage.get("prompt_tokens").asInt()
                + usage.get("completion_tokens").asInt()
                - 1;
        return (cached + BLOCK_SIZE - 1) / BLOCK_SIZE;
    }

    @Test
    void aSmallCacheSizedFromItsMemoryBudgetServesRequestsThatCycleThroughEveryBlock() throws Exception {
        PatchbayServer s = start(
                "--kv-cache-memory-bytes",
                (BLOCKS * BLOCK_SIZE * BYTES_PER_TOKEN / 1024) + "K",
                "--max-model-len",
                "64");
        ConcurrentLinkedQueue<String> badSnapshots = new ConcurrentLinkedQueue<>();
        AtomicBoolean sawUse = new AtomicBoolean();
        s.engine().addListener(snap -> {
            if (snap.kvBlocksUsed() < 0
                    || snap.kvBlocksUsed() > snap.kvBlocksTotal()
                    || snap.kvBlocksTotal() != BLOCKS) {
                badSnapshots.add(snap.kvBlocksUsed() + "/" + snap.kvBlocksTotal());
            }
            if (snap.kvBlocksUsed() > 0) sawUse.set(true);
        });
        try {
            LlamaExecutor executor = (LlamaExecutor) s.engine().model().executor();
            assertThat(executor.kvCacheBlocks()).hasValue(BLOCKS);
            assertThat(s.engine().config().numKvBlocks()).isEqualTo(BLOCKS);
            assertThat(s.engine().snapshot().kvBlocksTotal()).isEqualTo(BLOCKS);
            assertThat(executor.kvCacheBytes()).isEqualTo((long) BLOCKS * BLOCK_SIZE * BYTES_PER_TOKEN);

            int blocksHandedOut = 0;
            for (int i = 0; i < 12; i++) blocksHandedOut += complete(s, i);

            // More requests at once than the cache holds: some wait or are preempted, none may fail.
            List<Double> usages = new ArrayList<>();
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                List<Future<Integer>> results = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    int n = 100 + i;
                    results.add(pool.submit(() -> complete(s, n)));
                }
                while (results.stream().anyMatch(f -> !f.isDone())) usages.add(kvUsage(s));
                for (Future<Integer> f : results) blocksHandedOut += f.get();
            }

            // Free blocks are reused least recently released first, so handing out more blocks than the cache has
            // means every block id in [0, BLOCKS) has been used.
            assertThat(blocksHandedOut).isGreaterThan(2 * BLOCKS);
            assertThat(sawUse).isTrue();
            assertThat(badSnapshots).isEmpty();
            assertThat(usages).allSatisfy(u -> assertThat(u).isBetween(0.0, 1.0));
            Await.until(
                    "the finished requests' blocks to be free",
                    () -> s.engine().snapshot().kvBlocksUsed() == 0);
        } finally {
            s.stop();
        }
    }

    private double kvUsage(PatchbayServer s) throws Exception {
        String page = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        return PromPage.parse(page).all("vllm:kv_cache_usage_perc").getFirst().value();
    }

    @Test
    void theHeapShareSizesTheCacheWhenNoSizeIsGiven() throws Exception {
        long maxHeap = Runtime.getRuntime().maxMemory();
        double share = 32.0 * 1024 * 1024 / maxHeap;
        PatchbayServer s = start("--gpu-memory-utilization", Double.toString(share), "--max-num-batched-tokens", "256");
        try {
            LlamaExecutor executor = (LlamaExecutor) s.engine().model().executor();
            assertThat(s.engine().config().numKvBlocks())
                    .isEqualTo(executor.kvCacheBlocks().orElseThrow());
            // The tiny model's weights and a 256-token step take well under a MiB of the 32 MiB.
            assertThat(executor.kvCacheBytes())
                    .isLessThanOrEqualTo((long) (share * maxHeap))
                    .isGreaterThan(28L << 20);
            assertThat(complete(s, 1)).isPositive();
        } finally {
            s.stop();
        }
    }

    @Test
    void theOverrideWinsOverTheMemoryBudget() throws Exception {
        PatchbayServer s = start("--num-gpu-blocks-override", "40", "--kv-cache-memory-bytes", "1M");
        try {
            assertThat(s.engine().config().numKvBlocks()).isEqualTo(40);
            assertThat(((LlamaExecutor) s.engine().model().executor()).kvCacheBlocks())
                    .hasValue(40);
        } finally {
            s.stop();
        }
    }

    @Test
    void aCacheThatCannotHoldOneFullLengthRequestRefusesToStart() {
        // 24 blocks of 4 tokens hold 96 tokens; the generated config allows 2048.
        assertThatThrownBy(() -> start("--kv-cache-memory-bytes", "48K"))
                .isInstanceOf(PatchbayServer.StartupException.class)
                .hasMessageContaining("24 blocks of 4 tokens hold 96 tokens, fewer than max_model_len 2048");
        assertThatThrownBy(() -> start("--kv-cache-memory-bytes", "100"))
                .isInstanceOf(PatchbayServer.StartupException.class)
                .hasMessageContaining("no room for the KV cache");
    }
}
