package dev.patchbay.engine;

/**
 * New output of one request, delivered after each step that produced some, and once at the end.
 *
 * @param newTokenIds   tokens generated since the previous output
 * @param textDelta     their text (stop strings held back and removed), empty when none
 * @param finishReason  null while the request runs
 * @param promptTokens  the prompt's length
 * @param outputTokens  tokens generated so far
 * @param error         a message when {@code finishReason} is ERROR, else null
 */
public record RequestOutput(long requestId, int[] newTokenIds, String textDelta, FinishReason finishReason,
                            int promptTokens, int outputTokens, String error) {
    public boolean finished() {
        return finishReason != null;
    }
}
