package dev.patchbay.engine;

import dev.patchbay.engine.RequestRejectedException.Reason;

/**
 * The context-length rule, checked in one place: a prompt plus the tokens to generate must fit in
 * {@code max_model_len}. The refusal carries vLLM's message.
 */
public record ContextLimit(int maxModelLen) {

    /**
     * The number of tokens a request may generate: {@code requestedMaxTokens}, or all the room the prompt leaves when
     * it is null. Refuses (INVALID) a prompt that leaves no room, or a request for more tokens than the room.
     */
    public int maxTokens(int promptTokens, Integer requestedMaxTokens) throws RequestRejectedException {
        int room = maxModelLen - promptTokens;
        int requested = requestedMaxTokens == null ? 1 : requestedMaxTokens;
        if (room < 1 || requested > room) {
            throw new RequestRejectedException(
                    Reason.INVALID,
                    "This model's maximum context length is " + maxModelLen
                            + " tokens. However, you requested " + (promptTokens + requested) + " tokens ("
                            + promptTokens
                            + " in the messages, " + requested + " in the completion). Please reduce the length of the "
                            + "messages or completion.");
        }
        return requestedMaxTokens == null ? room : requestedMaxTokens;
    }
}
