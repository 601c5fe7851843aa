package dev.patchbay.engine.model;

import dev.patchbay.engine.exec.Executor;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** A base model as the engine serves it: its shapes, its tokenizer and chat format, and how to run it. */
public interface Model extends AutoCloseable {
    /** Where the model came from (a directory, or {@code sim:<name>}); the base card's {@code root}. */
    String source();

    ModelConfig config();

    Tokenizer tokenizer();

    /** Renders a conversation into the prompt text the model expects. */
    String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt);

    /**
     * A token's vocabulary entry as the tokenizer spells it (Hugging Face's {@code convert_ids_to_tokens}), for
     * {@code /tokenize}'s {@code token_strs}; by default the text its bytes decode to.
     */
    default String tokenString(int tokenId) {
        return new String(tokenizer().tokenBytes(tokenId), StandardCharsets.UTF_8);
    }

    /**
     * Token ids back to text with special tokens written out, as Hugging Face's {@code decode} does by default and
     * {@code /detokenize} answers; generated text leaves them out instead ({@link Tokenizer#decode}).
     */
    default String detokenize(int[] tokenIds) {
        return tokenizer().decode(tokenIds);
    }

    /** The dtype adapters are kept in, for {@code lora_dtype}. */
    String dtype();

    Executor executor();

    @Override
    default void close() {}
}
