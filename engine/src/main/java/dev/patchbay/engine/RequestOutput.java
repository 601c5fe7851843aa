package dev.patchbay.engine;

import dev.patchbay.engine.exec.TokenLogprobs;
import java.util.List;

/**
 * New output of one request, delivered after each step that produced some, and once at the end.
 *
 * @param newTokenIds   tokens generated since the previous output
 * @param textDelta     their text (stop strings held back and removed), empty when none
 * @param finishReason  null while the request runs
 * @param promptTokens  the prompt's length
 * @param outputTokens  tokens generated so far
 * @param error         a message when {@code finishReason} is ERROR, else null
 * @param logprobs      with {@code logprobs} asked for, one entry per token of {@code newTokenIds}; else null
 * @param promptLogprobs with {@code prompt_logprobs} asked for, one entry per prompt token (the first null, as
 *                      nothing predicts it), in the first output only; else null
 */
public record RequestOutput(
        long requestId,
        int[] newTokenIds,
        String textDelta,
        FinishReason finishReason,
        int promptTokens,
        int outputTokens,
        String error,
        List<TokenLogprobs> logprobs,
        List<TokenLogprobs> promptLogprobs) {
    public RequestOutput(
            long requestId,
            int[] newTokenIds,
            String textDelta,
            FinishReason finishReason,
            int promptTokens,
            int outputTokens,
            String error) {
        this(requestId, newTokenIds, textDelta, finishReason, promptTokens, outputTokens, error, null, null);
    }

    public boolean finished() {
        return finishReason != null;
    }
}
