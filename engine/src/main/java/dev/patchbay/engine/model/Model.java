package dev.patchbay.engine.model;

import dev.patchbay.engine.exec.Executor;
import java.util.List;

/** A base model as the engine serves it: its shapes, its tokenizer and chat format, and how to run it. */
public interface Model extends AutoCloseable {
    /** Where the model came from (a directory, or {@code sim:<name>}); the base card's {@code root}. */
    String source();

    ModelConfig config();

    Tokenizer tokenizer();

    /** Renders a conversation into the prompt text the model expects. */
    String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt);

    /** The dtype adapters are kept in, for {@code lora_dtype}. */
    String dtype();

    Executor executor();

    @Override
    default void close() {}
}
