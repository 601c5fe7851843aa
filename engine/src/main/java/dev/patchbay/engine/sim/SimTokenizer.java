package dev.patchbay.engine.sim;

import dev.patchbay.engine.model.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The simulated model's tokenizer: common English words (with their leading space) are one token each,
 * everything else falls back to one token per UTF-8 byte, so any text round-trips exactly.
 */
public final class SimTokenizer implements Tokenizer {
    public static final int EOS = 256;
    private static final int FIRST_WORD = 257;
    private static final Pattern PIECE = Pattern.compile(" ?[A-Za-z]+|.", Pattern.DOTALL);
    private static final String WORDS = """
            the of and to in is that it was for on are as with his they at be this from have or by one had not but
            what all were when we there can an your which their said if do will each about how up out them then she
            many some so these would other into has more her two like him see time could no make than first been its
            who now people my made over did down only way find use may water long little very after words called just
            where most know get through back much before go good new write our used me man too any day same right look
            think also around another came come work three word must because does part even place well such here take
            why things help put years different away again off went old number great tell men say small every found
            still between name should home big give air line set own under read last never us left end along while
            might next sound below saw something thought both few those always looked show large often together asked
            house world going want school important until form food keep children feet land side without boy once
            animals life enough took sometimes four head above kind began almost live page got earth need far hand
            high year mother light parts country father let night following picture being study second eyes soon
            times story boys since white days ever paper hard near sentence better best across during today others
            however sure means knew try told young miles sun ways thing whole hear example heard several change
            answer room sea against top turned learn point city play toward five using himself usually model adapter
            server request token batch cache route latency""";

    private final String[] words;
    private final Map<String, Integer> ids = new HashMap<>();

    public SimTokenizer() {
        String[] base = WORDS.trim().split("\\s+");
        words = new String[base.length];
        for (int i = 0; i < base.length; i++) {
            words[i] = " " + base[i];
            ids.put(words[i], FIRST_WORD + i);
        }
    }

    @Override
    public int[] encode(String text, boolean addSpecialTokens) {
        Matcher m = PIECE.matcher(text);
        int[] out = new int[Math.max(4, text.length())];
        int n = 0;
        while (m.find()) {
            String piece = m.group();
            Integer id = ids.get(piece);
            if (id != null) {
                out = ensure(out, n + 1);
                out[n++] = id;
            } else {
                byte[] b = piece.getBytes(StandardCharsets.UTF_8);
                out = ensure(out, n + b.length);
                for (byte x : b) out[n++] = x & 0xFF;
            }
        }
        return Arrays.copyOf(out, n);
    }

    private static int[] ensure(int[] a, int size) {
        return size <= a.length ? a : Arrays.copyOf(a, Math.max(size, a.length * 2));
    }

    @Override
    public byte[] tokenBytes(int tokenId) {
        if (tokenId >= 0 && tokenId < 256) return new byte[] {(byte) tokenId};
        if (tokenId >= FIRST_WORD && tokenId < FIRST_WORD + words.length) {
            return words[tokenId - FIRST_WORD].getBytes(StandardCharsets.UTF_8);
        }
        return new byte[0]; // EOS and anything unknown is special: no text
    }

    @Override
    public int vocabSize() {
        return FIRST_WORD + words.length;
    }

    @Override
    public int eosTokenId() {
        return EOS;
    }

    /** Ids of whole-word tokens, the ones random text is made of. */
    public int firstWordId() {
        return FIRST_WORD;
    }

    public int numWords() {
        return words.length;
    }
}
