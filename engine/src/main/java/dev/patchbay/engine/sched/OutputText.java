package dev.patchbay.engine.sched;

import dev.patchbay.engine.model.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Turns a request's output tokens into text as they come: joins UTF-8 sequences split across tokens,
 * finds stop strings, and holds back the tail that could still become a stop string so it is never sent.
 */
final class OutputText {
    private final Tokenizer tokenizer;
    private final List<String> stops;
    private final int holdback;
    private final StringBuilder text = new StringBuilder();
    private byte[] pending = new byte[8];
    private int pendingLen;
    private int emitted;

    OutputText(Tokenizer tokenizer, List<String> stops) {
        this.tokenizer = tokenizer;
        this.stops = stops;
        int longest = 0;
        for (String s : stops) longest = Math.max(longest, s.length());
        this.holdback = Math.max(0, longest - 1);
    }

    /** Adds a token's text; returns true when the text now contains a stop string (the text is cut before it). */
    boolean append(int token) {
        byte[] b = tokenizer.tokenBytes(token);
        if (pendingLen + b.length > pending.length)
            pending = Arrays.copyOf(pending, Math.max(pending.length * 2, pendingLen + b.length));
        System.arraycopy(b, 0, pending, pendingLen, b.length);
        pendingLen += b.length;
        int complete = completeUtf8Prefix(pending, pendingLen);
        if (complete == 0) return false;
        int before = text.length();
        text.append(new String(pending, 0, complete, StandardCharsets.UTF_8));
        System.arraycopy(pending, complete, pending, 0, pendingLen - complete);
        pendingLen -= complete;
        if (stops.isEmpty()) return false;
        int searchFrom = Math.max(0, before - holdback);
        int cut = -1;
        for (String s : stops) {
            int at = text.indexOf(s, searchFrom);
            if (at >= 0 && (cut < 0 || at < cut)) cut = at;
        }
        if (cut < 0) return false;
        text.setLength(Math.max(cut, emitted));
        return true;
    }

    /** Text not yet sent; while running, keeps back what might still turn into a stop string. */
    String takeDelta(boolean finished) {
        int end = finished ? text.length() : Math.max(emitted, text.length() - holdback);
        String delta = text.substring(emitted, end);
        emitted = end;
        return delta;
    }

    /** Length of the longest prefix that does not end inside a UTF-8 sequence. */
    static int completeUtf8Prefix(byte[] b, int len) {
        for (int back = 1; back <= Math.min(3, len); back++) {
            int v = b[len - back] & 0xFF;
            if ((v & 0xC0) == 0x80) continue; // continuation byte: keep looking for the lead byte
            int need = v >= 0xF0 ? 4 : v >= 0xE0 ? 3 : v >= 0xC0 ? 2 : 1;
            return need > back ? len - back : len;
        }
        return len;
    }
}
