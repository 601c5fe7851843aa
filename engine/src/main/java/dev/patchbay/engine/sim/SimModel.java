package dev.patchbay.engine.sim;

import dev.patchbay.engine.exec.Executor;
import dev.patchbay.engine.model.ChatMessage;
import dev.patchbay.engine.model.Model;
import dev.patchbay.engine.model.ModelConfig;
import dev.patchbay.engine.model.Tokenizer;
import java.util.Arrays;
import java.util.List;

/**
 * The simulated model ({@code --model sim:<name>}): a Llama-shaped config for adapter validation, a word
 * tokenizer, a plain chat format and the simulated executor.
 */
public final class SimModel implements Model {
    /** Shapes of a small Llama-style model, so demo adapters stay small on disk. */
    public static final ModelConfig DEFAULT_CONFIG = new ModelConfig(
            "SimForCausalLM",
            1024,
            8,
            16,
            4,
            64,
            2816,
            new SimTokenizer().vocabSize(),
            8192,
            1e-5,
            10000.0,
            false,
            false,
            "float16",
            null);

    /** How the end-of-sequence token is written where special tokens are spelled out. */
    public static final String EOS_TEXT = "</s>";

    private final String name;
    private final ModelConfig config;
    private final SimTokenizer tokenizer = new SimTokenizer();
    private final SimulatedExecutor executor;

    public SimModel(
            String name,
            ModelConfig config,
            LatencyModel latency,
            SimulatedExecutor.TextMode mode,
            double eosProbability) {
        this.name = name;
        this.config = config;
        this.executor = new SimulatedExecutor(latency, mode, eosProbability, tokenizer);
    }

    public static SimModel withDefaults(String name, LatencyModel latency) {
        return new SimModel(name, DEFAULT_CONFIG, latency, SimulatedExecutor.TextMode.RANDOM, 0.02);
    }

    @Override
    public String source() {
        return "sim:" + name;
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    @Override
    public Tokenizer tokenizer() {
        return tokenizer;
    }

    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt) {
        StringBuilder sb = new StringBuilder();
        for (ChatMessage m : messages)
            sb.append(m.role()).append(": ").append(m.content()).append('\n');
        if (addGenerationPrompt) sb.append("assistant:");
        return sb.toString();
    }

    /** Words as they are (" the"), ASCII bytes as their character, other bytes as {@code <0xNN>}, EOS as {@code </s>}. */
    @Override
    public String tokenString(int tokenId) {
        if (tokenId == SimTokenizer.EOS) return EOS_TEXT;
        if (tokenId >= 0x80 && tokenId < 0x100) return String.format("<0x%02X>", tokenId);
        return Model.super.tokenString(tokenId);
    }

    @Override
    public String detokenize(int[] tokenIds) {
        StringBuilder out = new StringBuilder();
        int from = 0;
        for (int i = 0; i <= tokenIds.length; i++) {
            if (i == tokenIds.length || tokenIds[i] == SimTokenizer.EOS) {
                out.append(tokenizer.decode(Arrays.copyOfRange(tokenIds, from, i)));
                if (i < tokenIds.length) out.append(EOS_TEXT);
                from = i + 1;
            }
        }
        return out.toString();
    }

    @Override
    public String dtype() {
        return "float16";
    }

    @Override
    public Executor executor() {
        return executor;
    }
}
