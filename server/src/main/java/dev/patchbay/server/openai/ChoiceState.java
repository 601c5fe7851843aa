package dev.patchbay.server.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.RequestOutput;
import dev.patchbay.engine.exec.TokenLogprobs;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * One choice of an answer as its engine outputs arrive: the text, the tokens and their log probabilities, and,
 * for {@code echo}, the prompt that the answer starts with.
 */
final class ChoiceState {
    private final int[] prompt;
    private final String promptText;
    private final boolean echo;
    private final StringBuilder text = new StringBuilder();
    private int[] tokens = new int[16];
    private int numTokens;
    private final List<TokenLogprobs> logprobs = new ArrayList<>();
    private List<TokenLogprobs> promptLogprobs;
    private FinishReason reason;
    /** Streaming: whether the echoed prompt went out yet, and the completions text offset reached. */
    private boolean echoSent;

    private int textOffset;

    ChoiceState(int[] prompt, String promptText, boolean echo) {
        this.prompt = prompt;
        this.promptText = promptText;
        this.echo = echo;
    }

    void add(RequestOutput o) {
        text.append(o.textDelta());
        if (numTokens + o.newTokenIds().length > tokens.length) {
            tokens = Arrays.copyOf(tokens, Math.max(tokens.length * 2, numTokens + o.newTokenIds().length));
        }
        System.arraycopy(o.newTokenIds(), 0, tokens, numTokens, o.newTokenIds().length);
        numTokens += o.newTokenIds().length;
        if (o.logprobs() != null) logprobs.addAll(o.logprobs());
        if (o.promptLogprobs() != null) promptLogprobs = o.promptLogprobs();
        if (o.finished()) reason = o.finishReason();
    }

    FinishReason reason() {
        return reason;
    }

    List<TokenLogprobs> promptLogprobs() {
        return promptLogprobs;
    }

    /** The whole text: the prompt's first with {@code echo}. */
    String text() {
        return echo ? promptText + text : text.toString();
    }

    /** Completions' logprobs of the whole answer (the echoed prompt's tokens first). */
    JsonNode completionLogprobs(LogprobsShapes shapes) {
        int[] out = Arrays.copyOf(tokens, numTokens);
        if (!echo) return shapes.completion(out, logprobs, 0);
        return shapes.completion(concat(prompt, out), concatLogprobs(promptLogprobs, logprobs), 0);
    }

    JsonNode chatLogprobs(LogprobsShapes shapes) {
        return shapes.chat(Arrays.copyOf(tokens, numTokens), logprobs);
    }

    /** A stream chunk's text for output {@code o}: its delta, after the prompt in the first one with {@code echo}. */
    String chunkText(RequestOutput o) {
        return echo && !echoSent ? promptText + o.textDelta() : o.textDelta();
    }

    /** Whether a chunk for {@code o} has anything to say: text, the end, tokens whose logprobs are wanted, or the echo. */
    boolean hasChunk(RequestOutput o, boolean logprobsWanted) {
        return !o.textDelta().isEmpty()
                || o.finished()
                || (logprobsWanted && o.newTokenIds().length > 0)
                || (echo && !echoSent);
    }

    /** The stream chunk's completions logprobs for {@code o}; the first one with {@code echo} covers the prompt too. */
    JsonNode chunkCompletionLogprobs(LogprobsShapes shapes, RequestOutput o) {
        int[] chunkTokens = o.newTokenIds();
        List<TokenLogprobs> chunkLogprobs = o.logprobs();
        if (echo && !echoSent) {
            chunkTokens = concat(prompt, chunkTokens);
            chunkLogprobs = concatLogprobs(o.promptLogprobs(), chunkLogprobs);
        }
        JsonNode node = shapes.completion(chunkTokens, chunkLogprobs, textOffset);
        textOffset = shapes.advance(textOffset, chunkTokens);
        return node;
    }

    /** Marks a stream chunk as sent: the echoed prompt, if any, went out with it. */
    void chunkSent() {
        echoSent = true;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** The prompt's log probabilities (all null when not computed), then {@code second}. */
    private List<TokenLogprobs> concatLogprobs(List<TokenLogprobs> first, List<TokenLogprobs> second) {
        List<TokenLogprobs> all = new ArrayList<>(first == null ? Collections.nCopies(prompt.length, null) : first);
        all.addAll(second);
        return all;
    }
}
