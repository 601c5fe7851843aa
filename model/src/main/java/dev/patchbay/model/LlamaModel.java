package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.engine.model.ChatMessage;
import dev.patchbay.engine.model.Model;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Llama-family model (Llama 2/3, Mistral, Qwen2) loaded from a Hugging Face directory, run by {@link LlamaExecutor};
 * its config's RoPE scaling is read by {@link Rope}, its sliding window by {@link SlidingWindow}.
 */
public final class LlamaModel implements Model {
    public static final Set<String> ARCHITECTURES =
            Set.of("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM");

    private final Path dir;
    private final ModelConfig config;
    private final BpeTokenizer tokenizer;
    private final ChatTemplate chatTemplate;
    private final TokenPieces pieces;
    private final LlamaExecutor executor;
    private final Map<String, Long> weightBytes;

    private LlamaModel(
            Path dir,
            ModelConfig config,
            BpeTokenizer tokenizer,
            TokenPieces pieces,
            ChatTemplate chatTemplate,
            LlamaExecutor executor,
            Map<String, Long> weightBytes) {
        this.dir = dir;
        this.config = config;
        this.tokenizer = tokenizer;
        this.pieces = pieces;
        this.chatTemplate = chatTemplate;
        this.executor = executor;
        this.weightBytes = weightBytes;
    }

    /**
     * Loads a model directory, printing progress on stderr.
     *
     * @param numKvBlocks KV cache blocks the executor holds (per layer, for keys and for values)
     * @param blockSize   tokens per KV block
     * @param maxLoras    adapter slots usable in one batch
     * @param threads     worker threads of the forward pass
     */
    public static LlamaModel load(Path dir, int numKvBlocks, int blockSize, int maxLoras, int threads)
            throws IOException {
        return load(dir, numKvBlocks, blockSize, maxLoras, threads, System.err);
    }

    /** As {@link #load(Path, int, int, int, int)}, with progress lines to {@code progress} (null for none). */
    public static LlamaModel load(
            Path dir, int numKvBlocks, int blockSize, int maxLoras, int threads, PrintStream progress)
            throws IOException {
        return load(dir, new KvCacheBudget.Blocks(numKvBlocks), blockSize, maxLoras, threads, progress);
    }

    /**
     * Loads a model directory with a KV cache of as many blocks as {@code kvBudget} gives once the weights are in
     * memory (the executor then reports them); prints the weights' and the cache's sizes on {@code progress}.
     */
    public static LlamaModel load(
            Path dir, KvCacheBudget kvBudget, int blockSize, int maxLoras, int threads, PrintStream progress)
            throws IOException {
        if (!Files.isDirectory(dir)) throw new IOException(dir + ": not a model directory");
        Path configFile = dir.resolve("config.json");
        if (!Files.isRegularFile(configFile)) throw new IOException(dir + ": no config.json");
        JsonNode configJson = ModelConfig.readTree(configFile);
        ModelConfig config;
        Rope rope;
        int[] windows;
        try {
            config = ModelConfig.fromJson(configJson, configFile.toString());
            if (!ARCHITECTURES.contains(config.architecture())) {
                throw new IOException(configFile + ": architecture " + config.architecture() + " is not supported ("
                        + ARCHITECTURES + ")");
            }
            if (config.numHeads() % config.numKvHeads() != 0 || config.headDim() % 2 != 0) {
                throw new IOException(configFile + ": " + config.numHeads() + " heads cannot share "
                        + config.numKvHeads() + " KV heads of even size " + config.headDim());
            }
            try {
                rope = Rope.of(config);
                windows = SlidingWindow.perLayer(configJson, config);
            } catch (IOException e) {
                throw new IOException(configFile + ": " + e.getMessage(), e);
            }
        } catch (RuntimeException e) {
            throw unreadable(configFile, e);
        }

        Path tokenizerFile = dir.resolve("tokenizer.json");
        if (!Files.isRegularFile(tokenizerFile)) throw new IOException(dir + ": no tokenizer.json");
        Path tokenizerConfigFile = dir.resolve("tokenizer_config.json");
        JsonNode tc = null;
        if (Files.isRegularFile(tokenizerConfigFile)) tc = ModelConfig.readTree(tokenizerConfigFile);
        String bos = tc == null ? null : tokenText(tc.get("bos_token"));
        String eos = tc == null ? null : tokenText(tc.get("eos_token"));
        Boolean addBos =
                tc != null && tc.has("add_bos_token") ? tc.get("add_bos_token").asBoolean() : null;
        BpeTokenizer tokenizer;
        TokenPieces pieces;
        try {
            if (eos == null) eos = eosFromConfig(configJson, tokenizerFile);
            tokenizer = BpeTokenizer.read(tokenizerFile, bos, eos, addBos);
            pieces = TokenPieces.read(tokenizerFile, tokenizer.vocabSize());
        } catch (RuntimeException e) {
            throw unreadable(tokenizerFile, e);
        }
        ChatTemplate template = null;
        String templateText = tc == null ? null : templateText(tc.get("chat_template"));
        try {
            if (templateText != null) template = new ChatTemplate(templateText, bos, eos);
        } catch (RuntimeException e) {
            throw new IOException(tokenizerConfigFile + ": " + e.getMessage(), e);
        }

        LlamaWeights weights;
        try {
            weights = LlamaWeights.load(dir, config, progress);
        } catch (RuntimeException e) {
            throw unreadable(dir.resolve(TensorFiles.SINGLE_FILE), e);
        } catch (OutOfMemoryError e) {
            throw new IOException(
                    dir + ": the JVM's max heap of "
                            + KvCacheBudget.formatBytes(Runtime.getRuntime().maxMemory())
                            + " cannot hold the weights; give it more (-Xmx)",
                    e);
        }
        KvCacheBudget.Plan kv = kvBudget.plan(config, blockSize, weights.bytes());
        if (progress != null) {
            progress.println(weights.describe());
            progress.println(kv.describe());
        }
        LlamaExecutor executor;
        try {
            executor = new LlamaExecutor(config, weights, rope, windows, kv.blocks(), blockSize, maxLoras, threads);
        } catch (OutOfMemoryError e) {
            // The cache is a few large arrays allocated here, so running out is this request's doing alone.
            throw new IOException(
                    "the JVM's max heap of "
                            + KvCacheBudget.formatBytes(Runtime.getRuntime().maxMemory())
                            + " cannot hold a KV cache of " + KvCacheBudget.formatBytes(kv.bytes())
                            + " besides the weights;"
                            + " give it more (-Xmx) or a smaller cache (--gpu-memory-utilization, --kv-cache-memory-bytes)",
                    e);
        }
        return new LlamaModel(dir, config, tokenizer, pieces, template, executor, weights.bytesByDtype());
    }

    /** A fault the checks above did not foresee, as one line naming the file, for the operator. */
    private static IOException unreadable(Path file, RuntimeException e) {
        return new IOException(
                file + ": cannot be read (" + e.getClass().getSimpleName()
                        + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")",
                e);
    }

    /** The text of the token config.json's eos_token_id names, for a tokenizer_config.json without eos_token. */
    private static String eosFromConfig(JsonNode configJson, Path tokenizerFile) throws IOException {
        JsonNode id = configJson.get("eos_token_id");
        int eosId = id == null ? -1 : id.isArray() ? id.path(0).asInt(-1) : id.asInt(-1);
        if (eosId < 0) return null;
        for (JsonNode t : new ObjectMapper().readTree(tokenizerFile.toFile()).path("added_tokens")) {
            if (t.path("id").asInt(-1) == eosId) return t.path("content").asText();
        }
        return null;
    }

    private static String tokenText(JsonNode n) {
        if (n == null || n.isNull()) return null;
        if (n.isTextual()) return n.asText();
        return n.hasNonNull("content") ? n.get("content").asText() : null;
    }

    private static String templateText(JsonNode n) {
        if (n == null || n.isNull()) return null;
        if (n.isTextual()) return n.asText();
        if (n.isArray()) {
            for (JsonNode t : n)
                if (t.path("name").asText().equals("default"))
                    return t.path("template").asText();
            return n.path(0).path("template").asText(null);
        }
        return null;
    }

    @Override
    public String source() {
        return dir.toString();
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public BpeTokenizer tokenizer() {
        return tokenizer;
    }

    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt) {
        if (chatTemplate == null) {
            throw new IllegalArgumentException(
                    "the model has no chat template (no chat_template in its tokenizer_config.json)");
        }
        return chatTemplate.render(messages, addGenerationPrompt);
    }

    @Override
    public String tokenString(int tokenId) {
        return pieces.piece(tokenId);
    }

    @Override
    public String detokenize(int[] tokenIds) {
        return pieces.decode(tokenIds, tokenizer);
    }

    /** The format most weights are held in: BF16 and F16 models keep theirs (and their adapters'), F32 ones F32. */
    @Override
    public String dtype() {
        return switch (weightBytes.keySet().iterator().next()) {
            case "BF16" -> "bfloat16";
            case "F16" -> "float16";
            default -> "float32";
        };
    }

    /** Heap the weights take per format they are held in ("BF16", "F16", "F32"), largest first. */
    public Map<String, Long> weightBytesByDtype() {
        return weightBytes;
    }

    @Override
    public LlamaExecutor executor() {
        return executor;
    }

    @Override
    public void close() {
        executor.close();
    }
}
