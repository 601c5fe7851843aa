package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.engine.model.Tokenizer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The BPE tokenizer of a Hugging Face {@code tokenizer.json}: byte-level (GPT-2, Llama 3, Qwen2) or SentencePiece-style
 * with byte fallback (Llama 2, Mistral; see {@link #encodeMetaspace}). Byte-level: added
 * tokens are split out first, the rest is cut by the pre-tokenizer's regex, each piece's UTF-8 bytes are
 * mapped to printable characters (GPT-2's byte-to-unicode table) and merged by rank.
 */
public final class BpeTokenizer implements Tokenizer {
    /** GPT-2's pre-tokenizer, used by a ByteLevel pre-tokenizer with use_regex. */
    public static final String GPT2_PATTERN =
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
    /** Llama 3's split pattern (Qwen2 differs only in single digits). */
    public static final String LLAMA3_PATTERN =
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    private static final char[] BYTE_TO_CHAR = new char[256];
    private static final int[] CHAR_TO_BYTE = new int[512];

    static {
        Arrays.fill(CHAR_TO_BYTE, -1);
        int n = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) (256 + n++);
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private final Map<String, Integer> vocab;
    private final Map<String, Integer> mergeRanks;
    private final byte[][] idBytes;
    private final Pattern preTokenizer;
    private final Pattern addedTokenPattern;
    private final Map<String, Integer> addedTokens;
    private final boolean ignoreMerges;
    private final int eosId;
    private final int bosId;
    private final String bosToken;
    private final boolean addBos;
    /** SentencePiece-style BPE (Llama 2, Mistral): spaces become '▁', unknown characters fall back to byte tokens. */
    private final boolean metaspace;
    /** Where a '▁' is put before a text segment: "always" (each segment), "first" (the text's start), "never". */
    private final String prependScheme;
    private final Map<String, int[]> cache = new ConcurrentHashMap<>();

    private BpeTokenizer(Map<String, Integer> vocab, Map<String, Integer> mergeRanks, byte[][] idBytes, Pattern preTokenizer,
                         Map<String, Integer> addedTokens, boolean ignoreMerges, int eosId, int bosId, String bosToken,
                         boolean addBos, String prependScheme) {
        this.vocab = vocab;
        this.mergeRanks = mergeRanks;
        this.idBytes = idBytes;
        this.preTokenizer = preTokenizer;
        this.addedTokens = addedTokens;
        this.ignoreMerges = ignoreMerges;
        this.eosId = eosId;
        this.bosId = bosId;
        this.bosToken = bosToken;
        this.addBos = addBos;
        this.metaspace = prependScheme != null;
        this.prependScheme = prependScheme;
        List<String> byLength = new ArrayList<>(addedTokens.keySet());
        byLength.sort(Comparator.comparingInt(String::length).reversed());
        this.addedTokenPattern = byLength.isEmpty() ? null
                : Pattern.compile(String.join("|", byLength.stream().map(Pattern::quote).toList()));
    }

    /**
     * Reads {@code tokenizer.json}. {@code bosToken}/{@code eosToken} come from {@code tokenizer_config.json} (null
     * when absent); {@code addBos} says whether a prompt that does not start with the BOS token gets one, as the
     * tokenizer's post-processor would add it.
     */
    public static BpeTokenizer read(Path tokenizerJson, String bosToken, String eosToken, Boolean addBos) throws IOException {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(tokenizerJson.toFile());
        } catch (IOException e) {
            throw new IOException(tokenizerJson + ": not valid JSON: " + e.getMessage(), e);
        }
        JsonNode model = root.path("model");
        String type = model.path("type").asText("BPE");
        if (!type.equals("BPE")) throw new IOException(tokenizerJson + ": tokenizer model type " + type + " is not supported (only BPE)");
        if (!model.path("vocab").isObject()) throw new IOException(tokenizerJson + ": model.vocab is missing");
        String prependScheme = metaspacePrependScheme(root);
        boolean metaspace = prependScheme != null;
        Pattern pattern = metaspace ? null : preTokenizerPattern(root.path("pre_tokenizer"), tokenizerJson);

        Map<String, Integer> vocab = new HashMap<>();
        int maxId = -1;
        for (var e : model.get("vocab").properties()) {
            vocab.put(e.getKey(), e.getValue().asInt());
            maxId = Math.max(maxId, e.getValue().asInt());
        }
        Map<String, Integer> merges = new HashMap<>();
        JsonNode mergeList = model.path("merges");
        for (int i = 0; i < mergeList.size(); i++) {
            JsonNode m = mergeList.get(i);
            String key;
            if (m.isArray() && m.size() == 2) {
                key = m.get(0).asText() + " " + m.get(1).asText();
            } else if (m.isTextual() && m.asText().indexOf(' ') > 0) {
                key = m.asText();
            } else {
                throw new IOException(tokenizerJson + ": merge " + i + " is malformed: " + m);
            }
            merges.putIfAbsent(key, i);
        }
        Map<String, Integer> added = new HashMap<>();
        Map<Integer, Boolean> special = new HashMap<>();
        for (JsonNode t : root.path("added_tokens")) {
            int id = t.path("id").asInt(-1);
            String content = t.path("content").asText("");
            if (id < 0 || content.isEmpty()) throw new IOException(tokenizerJson + ": malformed added token " + t);
            added.put(content, id);
            special.put(id, t.path("special").asBoolean(false));
            maxId = Math.max(maxId, id);
        }
        byte[][] idBytes = new byte[maxId + 1][];
        for (var e : vocab.entrySet()) {
            idBytes[e.getValue()] = metaspace ? metaspaceBytes(e.getKey()) : unicodeToBytes(e.getKey());
        }
        for (var e : added.entrySet()) {
            idBytes[e.getValue()] = special.get(e.getValue()) ? new byte[0] : e.getKey().getBytes(StandardCharsets.UTF_8);
        }
        for (int i = 0; i < idBytes.length; i++) if (idBytes[i] == null) idBytes[i] = new byte[0];

        int eos = tokenId(eosToken, vocab, added);
        int bos = tokenId(bosToken, vocab, added);
        boolean bosFromPostProcessor = bosToken != null && root.path("post_processor").toString().contains(bosToken);
        boolean prependBos = bos >= 0 && (addBos != null ? addBos : bosFromPostProcessor);
        return new BpeTokenizer(vocab, merges, idBytes, pattern, added, model.path("ignore_merges").asBoolean(false),
                eos, bos, bosToken, prependBos, prependScheme);
    }

    /**
     * The prepend scheme of a SentencePiece-style file, or null for byte-level BPE: a Metaspace pre-tokenizer
     * (its prepend_scheme, or add_prefix_space), or a normalizer that prepends '\u2581' and turns spaces into it
     * (newer Llama 2 / Mistral files, applied to each segment).
     */
    private static String metaspacePrependScheme(JsonNode root) {
        JsonNode pre = root.path("pre_tokenizer");
        List<JsonNode> steps = new ArrayList<>();
        steps.add(pre);
        pre.path("pretokenizers").forEach(steps::add);
        for (JsonNode p : steps) {
            if (p.path("type").asText("").equals("Metaspace")) {
                if (p.hasNonNull("prepend_scheme")) return p.get("prepend_scheme").asText();
                return p.path("add_prefix_space").asBoolean(true) ? "always" : "never";
            }
        }
        String normalizer = root.path("normalizer").toString();
        if (normalizer.indexOf('\u2581') < 0) return null;
        return normalizer.contains("\"Prepend\"") ? "always" : "never";
    }

    /** A SentencePiece token's bytes: {@code <0xAB>} is one raw byte, '▁' stands for a space. */
    private static byte[] metaspaceBytes(String token) {
        if (token.length() == 6 && token.startsWith("<0x") && token.endsWith(">")) {
            try {
                return new byte[] {(byte) Integer.parseInt(token.substring(3, 5), 16)};
            } catch (NumberFormatException e) {
                // not a byte token after all
            }
        }
        return token.replace('\u2581', ' ').getBytes(StandardCharsets.UTF_8);
    }

    private static int tokenId(String token, Map<String, Integer> vocab, Map<String, Integer> added) {
        if (token == null) return -1;
        Integer id = added.get(token);
        if (id == null) id = vocab.get(token);
        return id == null ? -1 : id;
    }

    private static Pattern preTokenizerPattern(JsonNode pre, Path file) throws IOException {
        List<JsonNode> steps = new ArrayList<>();
        if (pre.path("type").asText("").equals("Sequence")) pre.path("pretokenizers").forEach(steps::add);
        else if (!pre.isMissingNode() && !pre.isNull()) steps.add(pre);
        String regex = null;
        boolean byteLevel = false;
        for (JsonNode s : steps) {
            switch (s.path("type").asText("")) {
                case "Split" -> {
                    JsonNode p = s.path("pattern");
                    regex = p.has("Regex") ? p.get("Regex").asText() : Pattern.quote(p.path("String").asText());
                }
                case "ByteLevel" -> {
                    byteLevel = true;
                    if (s.path("use_regex").asBoolean(true) && regex == null) regex = GPT2_PATTERN;
                }
                case "Digits", "Punctuation", "Whitespace", "WhitespaceSplit" -> { }
                default -> throw new IOException(file + ": pre-tokenizer " + s.path("type").asText() + " is not supported"
                        + " (only byte-level BPE: Split and ByteLevel)");
            }
        }
        if (!byteLevel) throw new IOException(file + ": not a byte-level BPE tokenizer (no ByteLevel pre-tokenizer)");
        try {
            return Pattern.compile(regex == null ? "(?s).+" : regex, Pattern.UNICODE_CHARACTER_CLASS);
        } catch (RuntimeException e) {
            throw new IOException(file + ": pre-tokenizer regex does not compile: " + e.getMessage(), e);
        }
    }

    private static byte[] unicodeToBytes(String token) {
        byte[] out = new byte[token.length()];
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            int b = c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
            if (b < 0) return token.getBytes(StandardCharsets.UTF_8); // not a byte-level token: keep its text
            out[i] = (byte) b;
        }
        return out;
    }

    public static String bytesToUnicode(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length);
        for (byte b : bytes) sb.append(BYTE_TO_CHAR[b & 0xff]);
        return sb.toString();
    }

    @Override
    public int[] encode(String text, boolean addSpecialTokens) {
        List<Integer> ids = new ArrayList<>();
        if (addSpecialTokens && addBos && (bosToken == null || !text.startsWith(bosToken))) ids.add(bosId);
        int pos = 0;
        if (addedTokenPattern != null) {
            Matcher m = addedTokenPattern.matcher(text);
            while (m.find()) {
                encodeOrdinary(text.substring(pos, m.start()), ids, pos == 0);
                ids.add(addedTokens.get(m.group()));
                pos = m.end();
            }
        }
        encodeOrdinary(text.substring(pos), ids, pos == 0);
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    private void encodeOrdinary(String text, List<Integer> out, boolean atStart) {
        if (text.isEmpty()) return;
        if (metaspace) {
            encodeMetaspace(text, out, atStart);
            return;
        }
        Matcher m = preTokenizer.matcher(text);
        while (m.find()) {
            String piece = bytesToUnicode(m.group().getBytes(StandardCharsets.UTF_8));
            int[] ids = cache.get(piece);
            if (ids == null) {
                ids = bpe(piece);
                if (cache.size() > 100_000) cache.clear();
                cache.put(piece, ids);
            }
            for (int id : ids) out.add(id);
        }
    }

    /**
     * SentencePiece's way: spaces become '▁', the text's start gets one (prepend scheme "first"), and the text is
     * cut before each '▁' so merges stay within words.
     */
    private void encodeMetaspace(String text, List<Integer> out, boolean atStart) {
        boolean prepend = prependScheme.equals("always") || (prependScheme.equals("first") && atStart);
        String normalized = (prepend ? "\u2581" : "") + text.replace(' ', '\u2581');
        int start = 0;
        for (int i = 1; i <= normalized.length(); i++) {
            if (i == normalized.length() || normalized.charAt(i) == '\u2581') {
                String piece = normalized.substring(start, i);
                int[] ids = cache.computeIfAbsent(piece, this::bpe);
                for (int id : ids) out.add(id);
                start = i;
            }
        }
    }

    /** Merges a piece's symbols, lowest merge rank first, all occurrences of the chosen pair at once. */
    private int[] bpe(String piece) {
        Integer whole = vocab.get(piece);
        if (whole != null && (ignoreMerges || piece.length() == 1)) return new int[] {whole};
        List<String> symbols = new ArrayList<>(piece.length());
        piece.codePoints().forEach(cp -> symbols.add(new String(Character.toChars(cp))));
        while (symbols.size() > 1) {
            int bestRank = Integer.MAX_VALUE;
            String bestLeft = null, bestRight = null;
            for (int i = 0; i + 1 < symbols.size(); i++) {
                Integer r = mergeRanks.get(symbols.get(i) + " " + symbols.get(i + 1));
                if (r != null && r < bestRank) {
                    bestRank = r;
                    bestLeft = symbols.get(i);
                    bestRight = symbols.get(i + 1);
                }
            }
            if (bestLeft == null) break;
            List<String> merged = new ArrayList<>(symbols.size());
            for (int i = 0; i < symbols.size(); i++) {
                if (i + 1 < symbols.size() && symbols.get(i).equals(bestLeft) && symbols.get(i + 1).equals(bestRight)) {
                    merged.add(bestLeft + bestRight);
                    i++;
                } else {
                    merged.add(symbols.get(i));
                }
            }
            symbols.clear();
            symbols.addAll(merged);
        }
        List<Integer> ids = new ArrayList<>(symbols.size());
        for (String s : symbols) {
            Integer id = vocab.get(s);
            if (id != null) {
                ids.add(id);
            } else if (metaspace) {
                for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
                    Integer fallback = vocab.get(String.format("<0x%02X>", b & 0xff));
                    if (fallback != null) ids.add(fallback);
                }
            } else {
                for (int i = 0; i < s.length(); i++) {
                    Integer c = vocab.get(String.valueOf(s.charAt(i)));
                    if (c != null) ids.add(c); // a byte the vocabulary lacks is dropped, as HF does without an unk token
                }
            }
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    @Override
    public byte[] tokenBytes(int tokenId) {
        return tokenId >= 0 && tokenId < idBytes.length ? idBytes[tokenId] : new byte[0];
    }

    @Override
    public int vocabSize() {
        return idBytes.length;
    }

    @Override
    public int eosTokenId() {
        return eosId;
    }

    public int bosTokenId() {
        return bosId;
    }

    /** The id of a token's text (vocabulary or added token), or -1. */
    public int tokenId(String token) {
        return tokenId(token, vocab, addedTokens);
    }
}
