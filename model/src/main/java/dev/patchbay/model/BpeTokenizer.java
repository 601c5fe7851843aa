package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.engine.model.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The BPE tokenizer of a Hugging Face {@code tokenizer.json}, byte-level (GPT-2, Llama 3, Qwen2/3) or
 * SentencePiece-style with byte fallback (Llama 2, Mistral), run in Hugging Face's order: added tokens are split
 * out, each remaining segment is normalized and pre-tokenized, and each piece is merged by rank.
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
    /** Pieces longer than this are not cached: a SentencePiece segment can be a whole prompt. */
    private static final int MAX_CACHED_PIECE = 256;

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

    /** An added token as tokenizer.json declares it; lstrip/rstrip take the whitespace beside it into the match. */
    private record AddedToken(
            String content, int id, boolean special, boolean lstrip, boolean rstrip, boolean singleWord) {}

    /** One pre-tokenizer step: cuts each piece into smaller ones. */
    private interface PreTokenizer {
        List<String> split(String piece, boolean atTextStart);
    }

    private final Map<String, Integer> vocab;
    /** (left id, right id) to (rank, merged id), packed in two longs' worth: see {@link #mergeKey}. */
    private final Map<Long, long[]> merges;

    private final byte[][] idBytes;
    /** The added tokens' texts, for the leftmost-longest match Hugging Face splits them out by. */
    private final TrieNode addedTokenTrie = new TrieNode();

    private final Map<String, AddedToken> addedTokens;
    private final UnaryOperator<String> normalizer;
    private final List<PreTokenizer> preTokenizers;
    /** Byte-level BPE maps each piece's UTF-8 bytes to GPT-2's printable characters before merging. */
    private final boolean byteLevel;

    private final boolean ignoreMerges;
    private final boolean byteFallback;
    private final int unkId;
    private final boolean fuseUnk;
    private final int eosId;
    private final int bosId;
    private final int[] prefixIds;
    private final int[] suffixIds;
    /** Spaces the decoder takes off the start of a decoded sequence (Llama 2's Strip, a Metaspace decoder). */
    private final int decodeStripLeadingSpaces;

    private final Map<String, int[]> cache = new ConcurrentHashMap<>();

    private BpeTokenizer(Builder b) {
        this.vocab = b.vocab;
        this.merges = b.merges;
        this.idBytes = b.idBytes;
        this.addedTokens = b.addedTokens;
        this.normalizer = b.normalizer;
        this.preTokenizers = b.preTokenizers;
        this.byteLevel = b.byteLevel;
        this.ignoreMerges = b.ignoreMerges;
        this.byteFallback = b.byteFallback;
        this.unkId = b.unkId;
        this.fuseUnk = b.fuseUnk;
        this.eosId = b.eosId;
        this.bosId = b.bosId;
        this.prefixIds = b.prefixIds;
        this.suffixIds = b.suffixIds;
        this.decodeStripLeadingSpaces = b.decodeStripLeadingSpaces;
        for (AddedToken t : addedTokens.values()) {
            TrieNode node = addedTokenTrie;
            for (int i = 0; i < t.content().length(); i++)
                node = node.next.computeIfAbsent(t.content().charAt(i), c -> new TrieNode());
            node.token = t;
        }
    }

    private static final class TrieNode {
        final Map<Character, TrieNode> next = new HashMap<>();
        AddedToken token;
    }

    /** The leftmost, then longest, added token in {@code text} from {@code from}: {start, end}, or null. */
    private int[] nextAddedToken(String text, int from) {
        if (addedTokenTrie.next.isEmpty()) return null;
        for (int start = from; start < text.length(); start++) {
            TrieNode node = addedTokenTrie;
            int end = -1;
            for (int i = start; i < text.length(); i++) {
                node = node.next.get(text.charAt(i));
                if (node == null) break;
                if (node.token != null) end = i + 1;
            }
            if (end > 0) return new int[] {start, end};
        }
        return null;
    }

    private static final class Builder {
        Map<String, Integer> vocab;
        Map<Long, long[]> merges;
        byte[][] idBytes;
        Map<String, AddedToken> addedTokens;
        UnaryOperator<String> normalizer;
        List<PreTokenizer> preTokenizers;
        boolean byteLevel;
        boolean ignoreMerges;
        boolean byteFallback;
        int unkId;
        boolean fuseUnk;
        int eosId;
        int bosId;
        int[] prefixIds;
        int[] suffixIds;
        int decodeStripLeadingSpaces;
    }

    /**
     * Reads {@code tokenizer.json}. {@code bosToken}/{@code eosToken} come from {@code tokenizer_config.json} (null
     * when absent); {@code addBos}, when not null, says whether an encoded prompt starts with the BOS token
     * (tokenizer_config.json's add_bos_token); otherwise the post-processor's template decides, as in Hugging Face.
     */
    public static BpeTokenizer read(Path tokenizerJson, String bosToken, String eosToken, Boolean addBos)
            throws IOException {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(tokenizerJson.toFile());
        } catch (IOException e) {
            throw new IOException(tokenizerJson + ": not valid JSON: " + e.getMessage(), e);
        }
        try {
            return read(root, bosToken, eosToken, addBos);
        } catch (IOException e) {
            throw new IOException(tokenizerJson + ": " + e.getMessage(), e);
        }
    }

    private static BpeTokenizer read(JsonNode root, String bosToken, String eosToken, Boolean addBos)
            throws IOException {
        JsonNode model = root.path("model");
        String type = model.path("type").asText("BPE");
        if (!type.equals("BPE")) throw new IOException("tokenizer model type " + type + " is not supported (only BPE)");
        if (!model.path("vocab").isObject()) throw new IOException("model.vocab is missing");
        Builder b = new Builder();
        b.preTokenizers = new ArrayList<>();
        b.byteLevel = readPreTokenizer(root.path("pre_tokenizer"), b.preTokenizers)
                || root.path("decoder").toString().contains("\"ByteLevel\"");
        b.normalizer = readNormalizer(root.path("normalizer"));

        b.vocab = new HashMap<>();
        int maxId = -1;
        for (var e : model.get("vocab").properties()) {
            b.vocab.put(e.getKey(), e.getValue().asInt());
            maxId = Math.max(maxId, e.getValue().asInt());
        }
        b.merges = new HashMap<>();
        JsonNode mergeList = model.path("merges");
        for (int i = 0; i < mergeList.size(); i++) {
            JsonNode m = mergeList.get(i);
            String left, right;
            if (m.isArray() && m.size() == 2) {
                left = m.get(0).asText();
                right = m.get(1).asText();
            } else if (m.isTextual() && m.asText().indexOf(' ') > 0) {
                int space = m.asText().indexOf(' ');
                left = m.asText().substring(0, space);
                right = m.asText().substring(space + 1);
            } else {
                throw new IOException("merge " + i + " is malformed: " + m);
            }
            Integer l = b.vocab.get(left), r = b.vocab.get(right), merged = b.vocab.get(left + right);
            if (l == null || r == null || merged == null) continue; // names a token the vocabulary lacks: never applies
            b.merges.putIfAbsent(mergeKey(l, r), new long[] {i, merged});
        }
        b.addedTokens = new HashMap<>();
        for (JsonNode t : root.path("added_tokens")) {
            int id = t.path("id").asInt(-1);
            String content = t.path("content").asText("");
            if (id < 0 || content.isEmpty()) throw new IOException("malformed added token " + t);
            b.addedTokens.put(
                    content,
                    new AddedToken(
                            content,
                            id,
                            t.path("special").asBoolean(false),
                            t.path("lstrip").asBoolean(false),
                            t.path("rstrip").asBoolean(false),
                            t.path("single_word").asBoolean(false)));
            maxId = Math.max(maxId, id);
        }
        b.idBytes = new byte[maxId + 1][];
        for (var e : b.vocab.entrySet()) {
            b.idBytes[e.getValue()] = b.byteLevel ? unicodeToBytes(e.getKey()) : sentencePieceBytes(e.getKey());
        }
        // A special token decodes to nothing; any other added token goes through the decoder like a vocabulary token
        // (Gemma's "▁▁" tokens are spaces).
        for (AddedToken t : b.addedTokens.values()) {
            b.idBytes[t.id()] = t.special()
                    ? new byte[0]
                    : b.byteLevel ? unicodeToBytes(t.content()) : sentencePieceBytes(t.content());
        }
        for (int i = 0; i < b.idBytes.length; i++) if (b.idBytes[i] == null) b.idBytes[i] = new byte[0];

        b.ignoreMerges = model.path("ignore_merges").asBoolean(false);
        b.byteFallback = model.path("byte_fallback").asBoolean(false);
        b.fuseUnk = model.path("fuse_unk").asBoolean(false);
        b.unkId = model.hasNonNull("unk_token") ? tokenId(model.get("unk_token").asText(), b.vocab, b.addedTokens) : -1;
        b.eosId = tokenId(eosToken, b.vocab, b.addedTokens);
        b.bosId = tokenId(bosToken, b.vocab, b.addedTokens);
        readPostProcessor(root.path("post_processor"), b);
        if (addBos != null && b.bosId >= 0) {
            List<Integer> prefix = new ArrayList<>();
            if (addBos) prefix.add(b.bosId);
            for (int id : b.prefixIds) if (id != b.bosId) prefix.add(id);
            b.prefixIds = prefix.stream().mapToInt(Integer::intValue).toArray();
        }
        b.decodeStripLeadingSpaces = decoderStrip(root.path("decoder"));
        return new BpeTokenizer(b);
    }

    /** The special tokens a TemplateProcessing post-processor puts around a single sequence ($A). */
    private static void readPostProcessor(JsonNode post, Builder b) throws IOException {
        b.prefixIds = new int[0];
        b.suffixIds = new int[0];
        for (JsonNode p : steps(post, "processors")) {
            if (!p.path("type").asText("").equals("TemplateProcessing")) continue;
            List<Integer> before = new ArrayList<>(), after = new ArrayList<>();
            boolean seenSequence = false;
            for (JsonNode piece : p.path("single")) {
                if (piece.has("Sequence")) {
                    seenSequence = true;
                    continue;
                }
                String name = piece.path("SpecialToken").path("id").asText(null);
                if (name == null) continue;
                JsonNode ids = p.path("special_tokens").path(name).path("ids");
                if (!ids.isArray() || ids.isEmpty())
                    throw new IOException("post_processor special token " + name + " has no ids");
                for (JsonNode id : ids) (seenSequence ? after : before).add(id.asInt());
            }
            b.prefixIds = before.stream().mapToInt(Integer::intValue).toArray();
            b.suffixIds = after.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    /** The steps of a post-processor or decoder: those {@code field} lists for a Sequence, else the one step itself. */
    private static List<JsonNode> steps(JsonNode node, String field) {
        List<JsonNode> steps = new ArrayList<>();
        if (node.path("type").asText("").equals("Sequence")) node.path(field).forEach(steps::add);
        else steps.add(node);
        return steps;
    }

    /** A Metaspace step's prepend_scheme ("always", "first" or "never"), from the older add_prefix_space if absent. */
    private static String prependScheme(JsonNode metaspace) {
        return metaspace.hasNonNull("prepend_scheme")
                ? metaspace.get("prepend_scheme").asText()
                : metaspace.path("add_prefix_space").asBoolean(true) ? "always" : "never";
    }

    /** How many leading spaces the decoder removes from a whole decoded sequence. */
    private static int decoderStrip(JsonNode decoder) {
        int strip = 0;
        for (JsonNode d : steps(decoder, "decoders")) {
            switch (d.path("type").asText("")) {
                // after Fuse the sequence is one string, so Strip's start applies to the text's start only
                case "Strip" -> {
                    if (d.path("content").asText("").equals(" "))
                        strip = d.path("start").asInt(0);
                }
                case "Metaspace" -> {
                    if (!prependScheme(d).equals("never")) strip = 1;
                }
                default -> {}
            }
        }
        return strip;
    }

    /** The normalizer as one function: NFC/NFD/NFKC/NFKD, Lowercase, Prepend, Replace, Strip, in sequence. */
    private static UnaryOperator<String> readNormalizer(JsonNode n) throws IOException {
        if (n.isMissingNode() || n.isNull()) return UnaryOperator.identity();
        String type = n.path("type").asText("");
        return switch (type) {
            case "Sequence" -> {
                List<UnaryOperator<String>> steps = new ArrayList<>();
                for (JsonNode s : n.path("normalizers")) steps.add(readNormalizer(s));
                yield s -> {
                    for (UnaryOperator<String> step : steps) s = step.apply(s);
                    return s;
                };
            }
            case "NFC" -> s -> Normalizer.normalize(s, Normalizer.Form.NFC);
            case "NFD" -> s -> Normalizer.normalize(s, Normalizer.Form.NFD);
            case "NFKC" -> s -> Normalizer.normalize(s, Normalizer.Form.NFKC);
            case "NFKD" -> s -> Normalizer.normalize(s, Normalizer.Form.NFKD);
            case "Lowercase" -> s -> s.toLowerCase(Locale.ROOT);
            case "Prepend" -> {
                String prefix = n.path("prepend").asText("");
                yield s -> s.isEmpty() ? s : prefix + s; // an empty segment stays empty, as in Hugging Face
            }
            case "Replace" -> {
                Pattern p = pattern(n.path("pattern"));
                String content = Matcher.quoteReplacement(n.path("content").asText(""));
                yield s -> p.matcher(s).replaceAll(content);
            }
            case "Strip" -> {
                boolean left = n.path("strip_left").asBoolean(false),
                        right = n.path("strip_right").asBoolean(false);
                yield s -> left && right ? s.strip() : left ? s.stripLeading() : right ? s.stripTrailing() : s;
            }
            default -> throw new IOException("normalizer " + type + " is not supported");
        };
    }

    private static Pattern pattern(JsonNode p) throws IOException {
        try {
            return p.has("Regex")
                    ? Pattern.compile(p.get("Regex").asText(), Pattern.UNICODE_CHARACTER_CLASS)
                    : Pattern.compile(Pattern.quote(p.path("String").asText()));
        } catch (RuntimeException e) {
            throw new IOException("regex " + p + " does not compile: " + e.getMessage(), e);
        }
    }

    /** Reads the pre-tokenizer steps into {@code out}; true when one is ByteLevel (the tokenizer is byte-level). */
    private static boolean readPreTokenizer(JsonNode pre, List<PreTokenizer> out) throws IOException {
        if (pre.isMissingNode() || pre.isNull()) return false;
        String type = pre.path("type").asText("");
        switch (type) {
            case "Sequence" -> {
                boolean byteLevel = false;
                for (JsonNode s : pre.path("pretokenizers")) byteLevel |= readPreTokenizer(s, out);
                return byteLevel;
            }
            case "Split" -> {
                String behavior = pre.path("behavior").asText("Isolated");
                if (!List.of("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")
                        .contains(behavior)) {
                    throw new IOException("pre-tokenizer Split with behavior " + behavior + " is not supported");
                }
                Pattern p = pattern(pre.path("pattern"));
                boolean invert = pre.path("invert").asBoolean(false);
                out.add((piece, start) -> split(p, piece, behavior, invert));
                return false;
            }
            case "Digits" -> {
                Pattern p = Pattern.compile(
                        pre.path("individual_digits").asBoolean(false) ? "\\p{N}" : "\\p{N}+",
                        Pattern.UNICODE_CHARACTER_CLASS);
                out.add((piece, start) -> split(p, piece, "Isolated", false));
                return false;
            }
            case "ByteLevel" -> {
                boolean prefixSpace = pre.path("add_prefix_space").asBoolean(false);
                Pattern gpt2 = pre.path("use_regex").asBoolean(true)
                        ? Pattern.compile(GPT2_PATTERN, Pattern.UNICODE_CHARACTER_CLASS)
                        : null;
                out.add((piece, start) -> {
                    String s = prefixSpace && !piece.startsWith(" ") ? " " + piece : piece;
                    return gpt2 == null ? List.of(s) : split(gpt2, s, "Isolated", false);
                });
                return true;
            }
            case "Metaspace" -> {
                String replacement = pre.path("replacement").asText("\u2581");
                String scheme = prependScheme(pre);
                boolean cut = pre.path("split").asBoolean(true);
                out.add((piece, atTextStart) -> {
                    String s = piece.replace(" ", replacement);
                    boolean prepend = scheme.equals("always") || (scheme.equals("first") && atTextStart);
                    if (prepend && !s.startsWith(replacement)) s = replacement + s;
                    return cut ? splitBefore(s, replacement) : List.of(s);
                });
                return false;
            }
            default -> throw new IOException("pre-tokenizer " + type + " is not supported");
        }
    }

    /**
     * Hugging Face's Split: the text cut into matches and the stretches between them (with {@code invert}, the
     * stretches are what matched), then by behavior: Isolated keeps both, Removed drops the matches, MergedWithPrevious
     * and MergedWithNext join a match to the stretch before or after it, Contiguous joins runs of matches.
     */
    private static List<String> split(Pattern p, String s, String behavior, boolean invert) {
        List<String> parts = new ArrayList<>();
        List<Boolean> isMatch = new ArrayList<>();
        Matcher m = p.matcher(s);
        int pos = 0;
        while (m.find()) {
            if (m.end() == m.start()) continue;
            if (m.start() > pos) {
                parts.add(s.substring(pos, m.start()));
                isMatch.add(invert);
            }
            parts.add(m.group());
            isMatch.add(!invert);
            pos = m.end();
        }
        if (pos < s.length()) {
            parts.add(s.substring(pos));
            isMatch.add(invert);
        }
        List<String> out = new ArrayList<>();
        switch (behavior) {
            case "Removed" -> {
                for (int i = 0; i < parts.size(); i++) if (!isMatch.get(i)) out.add(parts.get(i));
            }
            case "MergedWithPrevious" -> {
                boolean previousMatch = false;
                for (int i = 0; i < parts.size(); i++) {
                    if (isMatch.get(i) && !previousMatch && !out.isEmpty())
                        out.set(out.size() - 1, out.getLast() + parts.get(i));
                    else out.add(parts.get(i));
                    previousMatch = isMatch.get(i);
                }
            }
            case "MergedWithNext" -> {
                boolean nextMatch = false;
                for (int i = parts.size() - 1; i >= 0; i--) {
                    if (isMatch.get(i) && !nextMatch && !out.isEmpty())
                        out.set(out.size() - 1, parts.get(i) + out.getLast());
                    else out.add(parts.get(i));
                    nextMatch = isMatch.get(i);
                }
                Collections.reverse(out);
            }
            case "Contiguous" -> {
                boolean previousMatch = false;
                for (int i = 0; i < parts.size(); i++) {
                    if (isMatch.get(i) == previousMatch && !out.isEmpty())
                        out.set(out.size() - 1, out.getLast() + parts.get(i));
                    else out.add(parts.get(i));
                    previousMatch = isMatch.get(i);
                }
            }
            default -> out.addAll(parts);
        }
        return out;
    }

    /** Cuts before each {@code marker}, the marker staying with what follows (Metaspace's MergedWithNext). */
    private static List<String> splitBefore(String s, String marker) {
        List<String> out = new ArrayList<>();
        int start = 0;
        for (int i = s.indexOf(marker, 1); i > 0; i = s.indexOf(marker, i + 1)) {
            out.add(s.substring(start, i));
            start = i;
        }
        if (start < s.length()) out.add(s.substring(start));
        return out;
    }

    /** A SentencePiece token's bytes: {@code <0xAB>} is one raw byte, '▁' stands for a space. */
    private static byte[] sentencePieceBytes(String token) {
        if (token.length() == 6 && token.startsWith("<0x") && token.endsWith(">")) {
            try {
                return new byte[] {(byte) Integer.parseInt(token.substring(3, 5), 16)};
            } catch (NumberFormatException e) {
                // not a byte token after all
            }
        }
        return token.replace('\u2581', ' ').getBytes(StandardCharsets.UTF_8);
    }

    private static int tokenId(String token, Map<String, Integer> vocab, Map<String, AddedToken> added) {
        if (token == null) return -1;
        AddedToken a = added.get(token);
        if (a != null) return a.id();
        Integer id = vocab.get(token);
        return id == null ? -1 : id;
    }

    private static long mergeKey(int left, int right) {
        return ((long) left << 32) | (right & 0xffffffffL);
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

    /**
     * With {@code addSpecialTokens}, the post-processor's tokens go around the text (Llama's BOS), even when the text
     * starts with the BOS token's own text, as in Hugging Face and vLLM.
     */
    @Override
    public int[] encode(String text, boolean addSpecialTokens) {
        List<Integer> ids = new ArrayList<>();
        if (addSpecialTokens) for (int id : prefixIds) ids.add(id);
        int pos = 0;
        boolean atStart = true;
        int from = 0;
        for (int[] match = nextAddedToken(text, from); match != null; match = nextAddedToken(text, from)) {
            AddedToken t = addedTokens.get(text.substring(match[0], match[1]));
            if (t.singleWord() && !standsAlone(text, match[0], match[1])) {
                from = match[0] + 1;
                continue;
            }
            int start = match[0], end = match[1];
            if (t.lstrip()) while (start > pos && isSpace(text.charAt(start - 1))) start--;
            if (t.rstrip()) while (end < text.length() && isSpace(text.charAt(end))) end++;
            encodeSegment(text.substring(pos, start), ids, atStart);
            ids.add(t.id());
            atStart = false;
            pos = end;
            from = end;
        }
        encodeSegment(text.substring(pos), ids, atStart);
        if (addSpecialTokens) for (int id : suffixIds) ids.add(id);
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    /** single_word: the match is not inside a word (no letter, digit or underscore beside it). */
    private static boolean standsAlone(String text, int start, int end) {
        boolean before = start > 0 && isWordChar(text.codePointBefore(start));
        boolean after = end < text.length() && isWordChar(text.codePointAt(end));
        return !before && !after;
    }

    /** Unicode White_Space, as Rust's char::is_whitespace (Java's isWhitespace leaves out no-break spaces). */
    private static boolean isSpace(char c) {
        return Character.isWhitespace(c) || Character.isSpaceChar(c) || c == '\u0085';
    }

    private static boolean isWordChar(int cp) {
        return Character.isLetterOrDigit(cp) || cp == '_';
    }

    private void encodeSegment(String segment, List<Integer> out, boolean atTextStart) {
        if (segment.isEmpty()) return;
        List<String> pieces = List.of(normalizer.apply(segment));
        for (PreTokenizer p : preTokenizers) {
            List<String> next = new ArrayList<>();
            for (String piece : pieces) next.addAll(p.split(piece, atTextStart));
            pieces = next;
        }
        for (String piece : pieces) {
            if (piece.isEmpty()) continue;
            String symbols = byteLevel ? bytesToUnicode(piece.getBytes(StandardCharsets.UTF_8)) : piece;
            int[] ids = symbols.length() <= MAX_CACHED_PIECE ? cache.get(symbols) : null;
            if (ids == null) {
                ids = bpe(symbols);
                if (symbols.length() <= MAX_CACHED_PIECE) {
                    if (cache.size() > 100_000) cache.clear();
                    cache.put(symbols, ids);
                }
            }
            for (int id : ids) out.add(id);
        }
    }

    /**
     * Merges a piece's symbols, the lowest-ranked pair first and the leftmost among equals, as Hugging Face's BPE
     * does, with a queue of candidate merges: O(n log n), so a long word or a whole SentencePiece segment stays cheap.
     */
    private int[] bpe(String piece) {
        if (ignoreMerges) {
            Integer whole = vocab.get(piece);
            if (whole != null) return new int[] {whole};
        }
        // The piece's characters as ids; a character the vocabulary lacks becomes its byte tokens or the unknown token.
        List<Integer> initial = new ArrayList<>(piece.length());
        int unknownRun = 0;
        for (int i = 0; i < piece.length(); ) {
            int cp = piece.codePointAt(i);
            String ch = piece.substring(i, i + Character.charCount(cp));
            i += ch.length();
            Integer id = vocab.get(ch);
            if (id != null) {
                initial.add(id);
                unknownRun = 0;
                continue;
            }
            int[] bytes = byteFallback ? byteTokens(ch) : null;
            if (bytes != null) {
                for (int b : bytes) initial.add(b);
                unknownRun = 0;
            } else if (unkId >= 0) {
                if (!(fuseUnk && unknownRun > 0)) initial.add(unkId);
                unknownRun++;
            } // without an unknown token the character is dropped
        }
        int n = initial.size();
        int[] sym = new int[n], prev = new int[n], next = new int[n];
        for (int i = 0; i < n; i++) {
            sym[i] = initial.get(i);
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
        }
        boolean[] gone = new boolean[n];
        // Candidates are (rank, position, merged id); a stale one (a side merged away since) is skipped.
        PriorityQueue<long[]> queue =
                new PriorityQueue<>((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        for (int i = 0; i + 1 < n; i++) offer(queue, sym, i, i + 1);
        while (!queue.isEmpty()) {
            long[] top = queue.poll();
            int at = (int) top[1];
            if (gone[at] || next[at] < 0) continue;
            int right = next[at];
            long[] merge = merges.get(mergeKey(sym[at], sym[right]));
            if (merge == null || merge[1] != top[2]) continue;
            sym[at] = (int) top[2];
            gone[right] = true;
            next[at] = next[right];
            if (next[at] >= 0) prev[next[at]] = at;
            if (prev[at] >= 0) offer(queue, sym, prev[at], at);
            if (next[at] >= 0) offer(queue, sym, at, next[at]);
        }
        int count = 0;
        for (int i = 0; i < n; i++) if (!gone[i]) count++;
        int[] out = new int[count];
        for (int i = 0, k = 0; i < n; i++) if (!gone[i]) out[k++] = sym[i];
        return out;
    }

    private void offer(PriorityQueue<long[]> queue, int[] sym, int left, int right) {
        long[] merge = merges.get(mergeKey(sym[left], sym[right]));
        if (merge != null) queue.add(new long[] {merge[0], left, merge[1]});
    }

    /** The {@code <0xAB>} tokens of a character's UTF-8 bytes, or null when the vocabulary lacks one. */
    private int[] byteTokens(String ch) {
        byte[] bytes = ch.getBytes(StandardCharsets.UTF_8);
        int[] ids = new int[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            Integer id = vocab.get(String.format("<0x%02X>", bytes[i] & 0xff));
            if (id == null) return null;
            ids[i] = id;
        }
        return ids;
    }

    @Override
    public byte[] tokenBytes(int tokenId) {
        return tokenId >= 0 && tokenId < idBytes.length ? idBytes[tokenId] : new byte[0];
    }

    /**
     * A whole sequence's text, as Hugging Face's decode with skip_special_tokens: special tokens are left out and the
     * decoder's leading-space strip applies (Llama 2 drops the space its normalizer put before the first word). A
     * stream of generated tokens is the {@link #tokenBytes} one after another, which keeps that space, as a server's
     * incremental detokenizer does after the prompt.
     */
    @Override
    public String decode(int[] ids) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int id : ids) out.writeBytes(tokenBytes(id));
        String text = out.toString(StandardCharsets.UTF_8);
        int strip = 0;
        while (strip < decodeStripLeadingSpaces && strip < text.length() && text.charAt(strip) == ' ') strip++;
        return text.substring(strip);
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
