package dev.patchbay.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.ZonedDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Jinja of Hugging Face chat templates, as transformers renders it: Python's semantics where a template sees them
 * (methods, slicing, truthiness, scoping), trim_blocks and lstrip_blocks, loop controls, {@code namespace},
 * {@code raise_exception}, {@code strftime_now}, {@code tojson} without ASCII escapes. Values are String, Long,
 * Double, Boolean, List, Map and null; parsed once, rendered many times; errors are IllegalArgumentExceptions.
 */
final class Jinja {
    /** What an unknown variable or missing attribute evaluates to: prints as nothing, is false, iterates as empty. */
    static final Object UNDEFINED = new Object() {
        @Override
        public String toString() {
            return "";
        }
    };

    private final List<Node> body;

    Jinja(String template) {
        this.body = new Parser(Lexer.lex(template)).parseBody(Parser.TEMPLATE_END);
    }

    String render(Map<String, Object> variables) {
        Scope scope = new Scope(null);
        scope.vars.putAll(globals());
        scope.vars.putAll(variables);
        StringBuilder out = new StringBuilder();
        try {
            renderBody(body, scope, out);
        } catch (LoopControl c) {
            throw new IllegalArgumentException("{% " + (c.isBreak ? "break" : "continue") + " %} outside a loop");
        } catch (StackOverflowError e) {
            throw new IllegalArgumentException("template recursion too deep");
        }
        return out.toString();
    }

    // ---------------------------------------------------------------- lexing

    private enum Kind {
        TEXT,
        EXPR,
        STMT,
        NAME,
        STRING,
        INT,
        FLOAT,
        OP,
        END
    }

    private record Token(Kind kind, String text, int line) {
        @Override
        public String toString() {
            return kind == Kind.END ? "end of tag" : "'" + text + "'";
        }
    }

    /**
     * Turns the source into text and tag tokens, whitespace control applied as Jinja's lexer does: '-' strips all
     * whitespace on its side, trim_blocks drops the newline after a block or comment tag, lstrip_blocks the spaces
     * and tabs from a line's start to a block or comment tag ('+' keeps them). Tag contents become expression tokens.
     */
    private static final class Lexer {
        private record Chunk(Kind kind, String text, boolean stripBefore, boolean stripAfter, boolean plus, int line) {}

        static List<Token> lex(String source) {
            // Jinja reads the source as lines joined by '\n' and, without keep_trailing_newline, drops a final one.
            String src = source.replace("\r\n", "\n").replace('\r', '\n');
            if (src.endsWith("\n")) src = src.substring(0, src.length() - 1);
            List<Chunk> chunks = new ArrayList<>();
            int pos = 0, line = 1;
            StringBuilder text = new StringBuilder();
            while (pos < src.length()) {
                int open = nextOpen(src, pos);
                if (open < 0) {
                    text.append(src, pos, src.length());
                    break;
                }
                text.append(src, pos, open);
                line += count(src, pos, open);
                char type = src.charAt(open + 1);
                String close = type == '{' ? "}}" : type == '%' ? "%}" : "#}";
                int contentStart = open + 2;
                boolean stripBefore = contentStart < src.length() && src.charAt(contentStart) == '-';
                boolean plus = contentStart < src.length() && src.charAt(contentStart) == '+';
                if (stripBefore || plus) contentStart++;
                int end = type == '#' ? src.indexOf(close, contentStart) : findClose(src, contentStart, close);
                if (end < 0)
                    throw new IllegalArgumentException("line " + line + ": unclosed " + src.substring(open, open + 2));
                boolean stripAfter = end > contentStart && src.charAt(end - 1) == '-';
                String content = src.substring(contentStart, stripAfter ? end - 1 : end);
                chunks.add(new Chunk(Kind.TEXT, text.toString(), false, false, false, line));
                text.setLength(0);
                Kind kind = type == '{' ? Kind.EXPR : type == '%' ? Kind.STMT : null;
                chunks.add(new Chunk(kind, content.strip(), stripBefore, stripAfter, plus, line));
                line += count(src, open, end);
                pos = end + 2;
                if (kind == Kind.STMT && content.strip().equals("raw")) {
                    // everything up to {% endraw %} is text
                    Matcher m =
                            Pattern.compile("\\{%([-+]?)\\s*endraw\\s*(-?)%}").matcher(src);
                    if (!m.find(pos))
                        throw new IllegalArgumentException("line " + line + ": {% raw %} without {% endraw %}");
                    chunks.add(new Chunk(Kind.TEXT, src.substring(pos, m.start()), false, false, false, line));
                    chunks.add(new Chunk(
                            Kind.STMT,
                            "endraw",
                            m.group(1).equals("-"),
                            m.group(2).equals("-"),
                            m.group(1).equals("+"),
                            line));
                    line += count(src, pos, m.end());
                    pos = m.end();
                }
            }
            chunks.add(new Chunk(Kind.TEXT, text.toString(), false, false, false, line));
            return tokens(whitespace(chunks));
        }

        private static int count(String s, int from, int to) {
            int n = 0;
            for (int i = from; i < to; i++) if (s.charAt(i) == '\n') n++;
            return n;
        }

        private static int nextOpen(String src, int from) {
            for (int i = src.indexOf('{', from); i >= 0 && i + 1 < src.length(); i = src.indexOf('{', i + 1)) {
                char c = src.charAt(i + 1);
                if (c == '{' || c == '%' || c == '#') return i;
            }
            return -1;
        }

        /** The tag's closing delimiter: not inside a string literal, nor inside brackets ({{ {'a': {'b': 1}}.a }}). */
        private static int findClose(String src, int from, String close) {
            char quote = 0;
            int depth = 0;
            for (int i = from; i + 1 < src.length(); i++) {
                char c = src.charAt(i);
                if (quote != 0) {
                    if (c == '\\') i++;
                    else if (c == quote) quote = 0;
                } else if (c == '\'' || c == '"') {
                    quote = c;
                } else if (depth == 0 && src.startsWith(close, i)) {
                    return i;
                } else if (c == '(' || c == '[' || c == '{') {
                    depth++;
                } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
                    depth--;
                }
            }
            return -1;
        }

        private static List<Chunk> whitespace(List<Chunk> chunks) {
            String[] texts = new String[chunks.size()];
            for (int i = 0; i < chunks.size(); i++) texts[i] = chunks.get(i).text();
            boolean lineStart = true; // the text chunk at i begins a line
            for (int i = 0; i < chunks.size(); i += 2) {
                Chunk tag = i + 1 < chunks.size() ? chunks.get(i + 1) : null;
                if (tag != null) {
                    boolean block = tag.kind() != Kind.EXPR;
                    if (tag.stripBefore()) {
                        texts[i] = texts[i].stripTrailing();
                    } else if (block && !tag.plus()) {
                        String t = texts[i];
                        int lineBegin = t.lastIndexOf('\n') + 1;
                        if ((lineBegin > 0 || lineStart)
                                && t.substring(lineBegin).chars().allMatch(c -> c == ' ' || c == '\t')) {
                            texts[i] = t.substring(0, lineBegin);
                        }
                    }
                    String next = texts[i + 2];
                    lineStart = false;
                    if (tag.stripAfter()) {
                        String stripped = next.stripLeading();
                        lineStart = next.length() > stripped.length()
                                && next.charAt(next.length() - stripped.length() - 1) == '\n';
                        texts[i + 2] = stripped;
                    } else if (block) {
                        if (next.startsWith("\n")) {
                            texts[i + 2] = next.substring(1);
                            lineStart = true;
                        } else if (next.startsWith("\r\n")) {
                            texts[i + 2] = next.substring(2);
                            lineStart = true;
                        }
                    }
                }
            }
            List<Chunk> out = new ArrayList<>();
            for (int i = 0; i < chunks.size(); i++) {
                Chunk c = chunks.get(i);
                if (c.kind() == null) continue; // a comment
                out.add(new Chunk(c.kind(), texts[i], c.stripBefore(), c.stripAfter(), c.plus(), c.line()));
            }
            return out;
        }

        private static List<Token> tokens(List<Chunk> chunks) {
            List<Token> out = new ArrayList<>();
            for (Chunk c : chunks) {
                if (c.kind() == Kind.TEXT) {
                    if (!c.text().isEmpty()) out.add(new Token(Kind.TEXT, c.text(), c.line()));
                    continue;
                }
                out.add(new Token(c.kind(), c.kind() == Kind.EXPR ? "{{" : "{%", c.line()));
                expressionTokens(c.text(), c.line(), out);
                out.add(new Token(Kind.END, "", c.line()));
            }
            out.add(new Token(Kind.END, "<end of template>", -1));
            return out;
        }

        private static final List<String> OPERATORS = List.of(
                "**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">", "=", "(", ")", "[", "]",
                "{", "}", ",", ".", ":", "|");

        private static void expressionTokens(String s, int line, List<Token> out) {
            int i = 0;
            while (i < s.length()) {
                char c = s.charAt(i);
                if (Character.isWhitespace(c)) {
                    i++;
                } else if (c == '\'' || c == '"') {
                    StringBuilder sb = new StringBuilder();
                    int j = i + 1;
                    while (j < s.length() && s.charAt(j) != c) {
                        char d = s.charAt(j);
                        if (d == '\\' && j + 1 < s.length()) {
                            char e = s.charAt(++j);
                            switch (e) {
                                case 'n' -> sb.append('\n');
                                case 't' -> sb.append('\t');
                                case 'r' -> sb.append('\r');
                                case 'b' -> sb.append('\b');
                                case 'f' -> sb.append('\f');
                                case '0' -> sb.append('\0');
                                case 'u' -> {
                                    sb.append((char) Integer.parseInt(s.substring(j + 1, j + 5), 16));
                                    j += 4;
                                }
                                case 'x' -> {
                                    sb.append((char) Integer.parseInt(s.substring(j + 1, j + 3), 16));
                                    j += 2;
                                }
                                case '\\', '\'', '"' -> sb.append(e);
                                default -> sb.append('\\').append(e); // Python keeps unknown escapes as written
                            }
                        } else {
                            sb.append(d);
                        }
                        j++;
                    }
                    if (j >= s.length()) throw new IllegalArgumentException("line " + line + ": unterminated string");
                    out.add(new Token(Kind.STRING, sb.toString(), line));
                    i = j + 1;
                } else if (Character.isDigit(c)) {
                    int j = i;
                    while (j < s.length() && (Character.isDigit(s.charAt(j)) || s.charAt(j) == '_')) j++;
                    boolean isFloat = false;
                    if (j + 1 < s.length() && s.charAt(j) == '.' && Character.isDigit(s.charAt(j + 1))) {
                        isFloat = true;
                        j++;
                        while (j < s.length() && Character.isDigit(s.charAt(j))) j++;
                    }
                    if (j < s.length() && (s.charAt(j) == 'e' || s.charAt(j) == 'E')) {
                        int k = j + 1;
                        if (k < s.length() && (s.charAt(k) == '+' || s.charAt(k) == '-')) k++;
                        if (k < s.length() && Character.isDigit(s.charAt(k))) {
                            isFloat = true;
                            j = k;
                            while (j < s.length() && Character.isDigit(s.charAt(j))) j++;
                        }
                    }
                    out.add(new Token(
                            isFloat ? Kind.FLOAT : Kind.INT, s.substring(i, j).replace("_", ""), line));
                    i = j;
                } else if (Character.isLetter(c) || c == '_') {
                    int j = i;
                    while (j < s.length() && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) j++;
                    out.add(new Token(Kind.NAME, s.substring(i, j), line));
                    i = j;
                } else {
                    String op = null;
                    for (String o : OPERATORS) {
                        if (s.startsWith(o, i)) {
                            op = o;
                            break;
                        }
                    }
                    if (op == null)
                        throw new IllegalArgumentException("line " + line + ": unexpected character '" + c + "'");
                    out.add(new Token(Kind.OP, op, line));
                    i += op.length();
                }
            }
        }
    }

    // ---------------------------------------------------------------- syntax tree

    private sealed interface Node
            permits Text, Output, If, For, Set, SetBlock, Macro, CallBlock, FilterBlock, Break, Continue {}

    private record Text(String text) implements Node {}

    private record Output(Expr expr) implements Node {}

    private record If(Expr test, List<Node> then, List<Node> otherwise) implements Node {}

    private record For(List<String> targets, Expr iterable, Expr filter, List<Node> body, List<Node> otherwise)
            implements Node {}

    private record Set(Expr target, Expr value) implements Node {}

    private record SetBlock(String name, List<Node> body) implements Node {}

    private record Macro(String name, List<String> params, List<Expr> defaults, List<Node> body) implements Node {}

    private record CallBlock(Expr call, List<Node> body) implements Node {}

    private record FilterBlock(String filter, List<Expr> args, List<Node> body) implements Node {}

    private record Break() implements Node {}

    private record Continue() implements Node {}

    private sealed interface Expr
            permits Literal,
                    Name,
                    ListExpr,
                    TupleExpr,
                    DictExpr,
                    Attr,
                    Index,
                    SliceExpr,
                    Call,
                    Filter,
                    Test,
                    Unary,
                    Binary,
                    Ternary,
                    Kwarg {}

    private record Literal(Object value) implements Expr {}

    private record Name(String name) implements Expr {}

    private record ListExpr(List<Expr> items) implements Expr {}

    private record TupleExpr(List<Expr> items) implements Expr {}

    private record DictExpr(List<Expr> keys, List<Expr> values) implements Expr {}

    private record Attr(Expr object, String name) implements Expr {}

    private record Index(Expr object, Expr index) implements Expr {}

    private record SliceExpr(Expr object, Expr start, Expr stop, Expr step) implements Expr {}

    private record Call(Expr callee, List<Expr> args) implements Expr {}

    private record Kwarg(String name, Expr value) implements Expr {}

    private record Filter(Expr operand, String name, List<Expr> args) implements Expr {}

    private record Test(Expr operand, String name, List<Expr> args, boolean negated) implements Expr {}

    private record Unary(String op, Expr operand) implements Expr {}

    private record Binary(String op, Expr left, Expr right) implements Expr {}

    private record Ternary(Expr test, Expr then, Expr otherwise) implements Expr {}

    // ---------------------------------------------------------------- parsing

    /** Jinja's grammar: statements by tag name, expressions by Jinja's precedence (filters and tests bind tightest). */
    private static final class Parser {
        /** No closing tag: parse to the template's end. */
        static final List<String> TEMPLATE_END = List.of();

        private final List<Token> tokens;
        private int pos;

        Parser(List<Token> tokens) {
            this.tokens = tokens;
        }

        private Token peek() {
            return tokens.get(pos);
        }

        private Token peek(int ahead) {
            return tokens.get(Math.min(pos + ahead, tokens.size() - 1));
        }

        private Token next() {
            return tokens.get(pos++);
        }

        private boolean isOp(String op) {
            return peek().kind() == Kind.OP && peek().text().equals(op);
        }

        private boolean isName(String name) {
            return peek().kind() == Kind.NAME && peek().text().equals(name);
        }

        private IllegalArgumentException error(String message) {
            Token t = peek();
            return new IllegalArgumentException(
                    (t.line() > 0 ? "line " + t.line() + ": " : "") + message + ", found " + t);
        }

        private void expectOp(String op) {
            if (!isOp(op)) throw error("expected '" + op + "'");
            pos++;
        }

        private void expectName(String name) {
            if (!isName(name)) throw error("expected '" + name + "'");
            pos++;
        }

        private String name() {
            if (peek().kind() != Kind.NAME) throw error("expected a name");
            return next().text();
        }

        private void endOfTag() {
            if (peek().kind() != Kind.END) throw error("expected the end of the tag");
            pos++;
        }

        /** Nodes up to a {% tag %} named in {@code stops} (left unread) or, with no stops, the template's end. */
        List<Node> parseBody(List<String> stops) {
            List<Node> nodes = new ArrayList<>();
            while (true) {
                Token t = peek();
                if (t.kind() == Kind.END) {
                    if (!stops.isEmpty()) throw error("expected {% " + String.join(" %} or {% ", stops) + " %}");
                    return nodes;
                }
                if (t.kind() == Kind.TEXT) {
                    nodes.add(new Text(next().text()));
                } else if (t.kind() == Kind.EXPR) {
                    pos++;
                    nodes.add(new Output(expression()));
                    endOfTag();
                } else if (t.kind() == Kind.STMT) {
                    Token tag = peek(1);
                    if (tag.kind() == Kind.NAME && stops.contains(tag.text())) return nodes;
                    pos++;
                    nodes.add(statement());
                } else {
                    throw error("unexpected token");
                }
            }
        }

        /** After a body: reads {% name %}. */
        private void closeTag(String name) {
            if (peek().kind() != Kind.STMT) throw error("expected {% " + name + " %}");
            pos++;
            expectName(name);
            endOfTag();
        }

        private Node statement() {
            String tag = name();
            switch (tag) {
                case "if" -> {
                    return ifRest();
                }
                case "for" -> {
                    List<String> targets = new ArrayList<>();
                    targets.add(name());
                    while (isOp(",")) {
                        pos++;
                        targets.add(name());
                    }
                    expectName("in");
                    Expr iterable = or(); // no ternary: a trailing "if" filters the loop
                    Expr filter = null;
                    if (isName("if")) {
                        pos++;
                        filter = expression();
                    }
                    if (isName("recursive")) throw error("recursive loops are not supported");
                    endOfTag();
                    List<Node> body = parseBody(List.of("else", "endfor"));
                    List<Node> otherwise = List.of();
                    if (peek(1).text().equals("else")) {
                        closeTag("else");
                        otherwise = parseBody(List.of("endfor"));
                    }
                    closeTag("endfor");
                    return new For(targets, iterable, filter, body, otherwise);
                }
                case "set" -> {
                    Expr target = primaryTarget();
                    if (isOp(",")) {
                        List<Expr> items = new ArrayList<>(List.of(target));
                        while (isOp(",")) {
                            pos++;
                            items.add(primaryTarget());
                        }
                        target = new TupleExpr(items);
                    }
                    if (peek().kind() == Kind.END && target instanceof Name n) {
                        endOfTag();
                        List<Node> body = parseBody(List.of("endset"));
                        closeTag("endset");
                        return new SetBlock(n.name(), body);
                    }
                    expectOp("=");
                    Expr value = tupleOrExpression();
                    endOfTag();
                    return new Set(target, value);
                }
                case "macro" -> {
                    String name = name();
                    List<String> params = new ArrayList<>();
                    List<Expr> defaults = new ArrayList<>();
                    expectOp("(");
                    while (!isOp(")")) {
                        params.add(name());
                        if (isOp("=")) {
                            pos++;
                            defaults.add(expression());
                        } else {
                            defaults.add(null);
                        }
                        if (isOp(",")) pos++;
                        else if (!isOp(")")) throw error("expected ',' or ')'");
                    }
                    pos++;
                    endOfTag();
                    List<Node> body = parseBody(List.of("endmacro"));
                    closeTag("endmacro");
                    return new Macro(name, params, defaults, body);
                }
                case "call" -> {
                    Expr call = expression();
                    endOfTag();
                    List<Node> body = parseBody(List.of("endcall"));
                    closeTag("endcall");
                    return new CallBlock(call, body);
                }
                case "filter" -> {
                    String filter = name();
                    List<Expr> args = isOp("(") ? arguments() : List.of();
                    endOfTag();
                    List<Node> body = parseBody(List.of("endfilter"));
                    closeTag("endfilter");
                    return new FilterBlock(filter, args, body);
                }
                case "raw" -> { // the lexer made its body one text token
                    return plainBlock("endraw");
                }
                case "generation" -> { // transformers' assistant-mask marker: renders its body
                    return plainBlock("endgeneration");
                }
                case "break" -> {
                    endOfTag();
                    return new Break();
                }
                case "continue" -> {
                    endOfTag();
                    return new Continue();
                }
                default -> {
                    pos--;
                    throw error("unknown tag");
                }
            }
        }

        /** A block tag without arguments whose body renders as it is, up to {@code {% end %}}. */
        private Node plainBlock(String end) {
            endOfTag();
            List<Node> body = parseBody(List.of(end));
            closeTag(end);
            return new If(new Literal(true), body, List.of());
        }

        private Node ifRest() {
            Expr test = expression();
            endOfTag();
            List<Node> then = parseBody(List.of("elif", "else", "endif"));
            String next = peek(1).text();
            List<Node> otherwise = List.of();
            if (next.equals("elif")) {
                pos += 2;
                otherwise = List.of(ifRest());
                return new If(test, then, otherwise);
            }
            if (next.equals("else")) {
                closeTag("else");
                otherwise = parseBody(List.of("endif"));
            }
            closeTag("endif");
            return new If(test, then, otherwise);
        }

        /** An assignment target: a name or a name's attribute (ns.value). */
        private Expr primaryTarget() {
            Expr e = new Name(name());
            while (isOp(".")) {
                pos++;
                e = new Attr(e, name());
            }
            return e;
        }

        private Expr tupleOrExpression() {
            Expr first = expression();
            if (!isOp(",")) return first;
            List<Expr> items = new ArrayList<>(List.of(first));
            while (isOp(",")) {
                pos++;
                if (peek().kind() == Kind.END || isOp(")")) break;
                items.add(expression());
            }
            return new TupleExpr(items);
        }

        Expr expression() {
            Expr e = or();
            if (isName("if")) {
                pos++;
                Expr test = or();
                Expr otherwise = new Literal(UNDEFINED);
                if (isName("else")) {
                    pos++;
                    otherwise = expression();
                }
                return new Ternary(test, e, otherwise);
            }
            return e;
        }

        private Expr or() {
            Expr e = and();
            while (isName("or")) {
                pos++;
                e = new Binary("or", e, and());
            }
            return e;
        }

        private Expr and() {
            Expr e = not();
            while (isName("and")) {
                pos++;
                e = new Binary("and", e, not());
            }
            return e;
        }

        private Expr not() {
            if (isName("not")) {
                pos++;
                return new Unary("not", not());
            }
            return compare();
        }

        private Expr compare() {
            Expr e = math1();
            while (true) {
                Token t = peek();
                if (t.kind() == Kind.OP
                        && List.of("==", "!=", "<", ">", "<=", ">=").contains(t.text())) {
                    pos++;
                    e = new Binary(t.text(), e, math1());
                } else if (isName("in")) {
                    pos++;
                    e = new Binary("in", e, math1());
                } else if (isName("not")
                        && peek(1).kind() == Kind.NAME
                        && peek(1).text().equals("in")) {
                    pos += 2;
                    e = new Unary("not", new Binary("in", e, math1()));
                } else {
                    return e;
                }
            }
        }

        private Expr math1() {
            Expr e = concat();
            while (isOp("+") || isOp("-")) {
                String op = next().text();
                e = new Binary(op, e, concat());
            }
            return e;
        }

        private Expr concat() {
            Expr e = math2();
            while (isOp("~")) {
                pos++;
                e = new Binary("~", e, math2());
            }
            return e;
        }

        private Expr math2() {
            Expr e = pow();
            while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
                String op = next().text();
                e = new Binary(op, e, pow());
            }
            return e;
        }

        private Expr pow() {
            Expr e = unary();
            while (isOp("**")) {
                pos++;
                e = new Binary("**", e, unary());
            }
            return e;
        }

        /** A sign applies before filters: -3|abs is (-3)|abs, as in Jinja. */
        private Expr unary() {
            return filters(signed());
        }

        private Expr signed() {
            if (isOp("-") || isOp("+")) {
                String op = next().text();
                return new Unary(op, signed());
            }
            return postfix(primary());
        }

        private Expr filters(Expr e) {
            while (true) {
                if (isOp("|")) {
                    pos++;
                    String name = name();
                    List<Expr> args = isOp("(") ? arguments() : List.of();
                    e = new Filter(e, name, args);
                } else if (isName("is")) {
                    pos++;
                    boolean negated = false;
                    if (isName("not")) {
                        pos++;
                        negated = true;
                    }
                    String name;
                    if (peek().kind() == Kind.NAME) name = name();
                    else throw error("expected a test name");
                    List<Expr> args = List.of();
                    if (isOp("(")) {
                        args = arguments();
                    } else if (peek().kind() == Kind.STRING
                            || peek().kind() == Kind.INT
                            || peek().kind() == Kind.FLOAT
                            || (peek().kind() == Kind.NAME
                                    && List.of("none", "None", "true", "True", "false", "False")
                                            .contains(peek().text()))) {
                        args = List.of(postfix(primary())); // "is divisibleby 3", "is sameas none"
                    }
                    e = new Test(e, name, args, negated);
                } else {
                    return e;
                }
            }
        }

        private List<Expr> arguments() {
            expectOp("(");
            List<Expr> args = new ArrayList<>();
            while (!isOp(")")) {
                if (peek().kind() == Kind.NAME
                        && peek(1).kind() == Kind.OP
                        && peek(1).text().equals("=")) {
                    String name = next().text();
                    pos++;
                    args.add(new Kwarg(name, expression()));
                } else {
                    args.add(expression());
                }
                if (isOp(",")) pos++;
                else if (!isOp(")")) throw error("expected ',' or ')'");
            }
            pos++;
            return args;
        }

        private Expr postfix(Expr e) {
            while (true) {
                if (isOp(".")) {
                    pos++;
                    Token t = next();
                    if (t.kind() != Kind.NAME && t.kind() != Kind.INT) throw error("expected an attribute name");
                    e = t.kind() == Kind.INT
                            ? new Index(e, new Literal(Long.parseLong(t.text())))
                            : new Attr(e, t.text());
                } else if (isOp("[")) {
                    pos++;
                    Expr start = null, stop = null, step = null;
                    boolean slice = false;
                    if (!isOp(":")) start = expression();
                    if (isOp(":")) {
                        slice = true;
                        pos++;
                        if (!isOp(":") && !isOp("]")) stop = expression();
                        if (isOp(":")) {
                            pos++;
                            if (!isOp("]")) step = expression();
                        }
                    }
                    expectOp("]");
                    e = slice ? new SliceExpr(e, start, stop, step) : new Index(e, start);
                } else if (isOp("(")) {
                    e = new Call(e, arguments());
                } else {
                    return e;
                }
            }
        }

        private Expr primary() {
            Token t = next();
            switch (t.kind()) {
                case STRING -> {
                    StringBuilder s = new StringBuilder(t.text());
                    while (peek().kind() == Kind.STRING) s.append(next().text()); // adjacent literals join
                    return new Literal(s.toString());
                }
                case INT -> {
                    return new Literal(Long.parseLong(t.text()));
                }
                case FLOAT -> {
                    return new Literal(Double.parseDouble(t.text()));
                }
                case NAME -> {
                    return switch (t.text()) {
                        case "true", "True" -> new Literal(true);
                        case "false", "False" -> new Literal(false);
                        case "none", "None" -> new Literal(null);
                        default -> new Name(t.text());
                    };
                }
                case OP -> {
                    switch (t.text()) {
                        case "(" -> {
                            if (isOp(")")) {
                                pos++;
                                return new TupleExpr(List.of());
                            }
                            Expr e = expression();
                            if (isOp(",")) {
                                List<Expr> items = new ArrayList<>(List.of(e));
                                while (isOp(",")) {
                                    pos++;
                                    if (isOp(")")) break;
                                    items.add(expression());
                                }
                                e = new TupleExpr(items);
                            }
                            expectOp(")");
                            return e;
                        }
                        case "[" -> {
                            List<Expr> items = new ArrayList<>();
                            while (!isOp("]")) {
                                items.add(expression());
                                if (isOp(",")) pos++;
                                else if (!isOp("]")) throw error("expected ',' or ']'");
                            }
                            pos++;
                            return new ListExpr(items);
                        }
                        case "{" -> {
                            List<Expr> keys = new ArrayList<>(), values = new ArrayList<>();
                            while (!isOp("}")) {
                                keys.add(expression());
                                expectOp(":");
                                values.add(expression());
                                if (isOp(",")) pos++;
                                else if (!isOp("}")) throw error("expected ',' or '}'");
                            }
                            pos++;
                            return new DictExpr(keys, values);
                        }
                        default -> {}
                    }
                }
                default -> {}
            }
            pos--;
            throw error("expected an expression");
        }
    }

    // ---------------------------------------------------------------- evaluation

    /**
     * Variables: each iteration of a for loop, the loop's else block and a macro call get their own scope; if and set
     * do not (as in Jinja2).
     */
    private static final class Scope {
        final Scope parent;
        final Map<String, Object> vars = new HashMap<>();

        Scope(Scope parent) {
            this.parent = parent;
        }

        Object get(String name) {
            for (Scope s = this; s != null; s = s.parent) if (s.vars.containsKey(name)) return s.vars.get(name);
            return UNDEFINED;
        }
    }

    /** {@code namespace(...)}: the one object a template may change, so a loop can hand values out of itself. */
    private static final class Namespace extends LinkedHashMap<String, Object> {}

    /** A callable value: a macro, a global function, or a bound method. */
    @FunctionalInterface
    private interface Callable {
        Object call(List<Object> args, Map<String, Object> kwargs);
    }

    private static final class LoopControl extends RuntimeException {
        final boolean isBreak;

        LoopControl(boolean isBreak) {
            super(null, null, false, false);
            this.isBreak = isBreak;
        }
    }

    private static Map<String, Object> globals() {
        Map<String, Object> g = new HashMap<>();
        g.put("raise_exception", (Callable) (args, kw) -> {
            throw new TemplateException(args.isEmpty() ? "raise_exception" : str(args.get(0)));
        });
        g.put("namespace", (Callable) (args, kw) -> {
            Namespace ns = new Namespace();
            for (Object a : args) if (a instanceof Map<?, ?> m) m.forEach((k, v) -> ns.put(str(k), v));
            ns.putAll(kw);
            return ns;
        });
        g.put("range", (Callable) (args, kw) -> {
            long start = 0, stop, step = 1;
            if (args.size() == 1) {
                stop = toLong(args.get(0));
            } else {
                start = toLong(args.get(0));
                stop = toLong(args.get(1));
                if (args.size() > 2) step = toLong(args.get(2));
            }
            if (step == 0) throw new IllegalArgumentException("range() step must not be zero");
            List<Object> out = new ArrayList<>();
            for (long i = start; step > 0 ? i < stop : i > stop; i += step) {
                out.add(i);
                if (out.size() > 1_000_000) throw new IllegalArgumentException("range() too long");
            }
            return out;
        });
        g.put("dict", (Callable) (args, kw) -> {
            Map<String, Object> m = new LinkedHashMap<>();
            for (Object a : args) if (a instanceof Map<?, ?> am) am.forEach((k, v) -> m.put(str(k), v));
            m.putAll(kw);
            return m;
        });
        g.put("strftime_now", (Callable) (args, kw) -> strftime(str(args.get(0)), ZonedDateTime.now()));
        return g;
    }

    /** A template's own refusal (raise_exception): its message is the error's whole message. */
    static final class TemplateException extends IllegalArgumentException {
        TemplateException(String message) {
            super(message);
        }
    }

    private void renderBody(List<Node> nodes, Scope scope, StringBuilder out) {
        for (Node n : nodes) render(n, scope, out);
    }

    private void render(Node node, Scope scope, StringBuilder out) {
        switch (node) {
            case Text t -> out.append(t.text());
            case Output o -> out.append(str(eval(o.expr(), scope)));
            case If i -> renderBody(truthy(eval(i.test(), scope)) ? i.then() : i.otherwise(), scope, out);
            case For f -> renderFor(f, scope, out);
            case Set s -> assign(s.target(), eval(s.value(), scope), scope);
            case SetBlock s -> {
                StringBuilder sb = new StringBuilder();
                renderBody(s.body(), scope, sb);
                scope.vars.put(s.name(), sb.toString());
            }
            case Macro m -> scope.vars.put(m.name(), macro(m, scope));
            case CallBlock c -> {
                if (!(c.call() instanceof Call call))
                    throw new IllegalArgumentException("{% call %} needs a macro call");
                // the body is handed to the macro as its caller()
                Object callee = eval(call.callee(), scope);
                if (!(callee instanceof Callable f))
                    throw new IllegalArgumentException(describe(call.callee()) + " is not callable");
                List<Object> args = new ArrayList<>();
                Map<String, Object> kwargs = new LinkedHashMap<>();
                evalArgs(call.args(), scope, args, kwargs);
                kwargs.put("caller", macro(new Macro("caller", List.of(), List.of(), c.body()), scope));
                out.append(str(f.call(args, kwargs)));
            }
            case FilterBlock f -> {
                StringBuilder sb = new StringBuilder();
                renderBody(f.body(), scope, sb);
                List<Object> args = new ArrayList<>();
                Map<String, Object> kwargs = new LinkedHashMap<>();
                evalArgs(f.args(), scope, args, kwargs);
                out.append(str(filter(f.filter(), sb.toString(), args, kwargs, scope)));
            }
            case Break b -> throw new LoopControl(true);
            case Continue c -> throw new LoopControl(false);
        }
    }

    private Callable macro(Macro m, Scope definedIn) {
        return (args, kwargs) -> {
            Scope s = new Scope(definedIn);
            for (int i = 0; i < m.params().size(); i++) {
                String p = m.params().get(i);
                Object v;
                if (i < args.size()) v = args.get(i);
                else if (kwargs.containsKey(p)) v = kwargs.get(p);
                else if (m.defaults().get(i) != null) v = eval(m.defaults().get(i), s);
                else v = UNDEFINED;
                s.vars.put(p, v);
            }
            if (kwargs.containsKey("caller")) s.vars.put("caller", kwargs.get("caller"));
            StringBuilder sb = new StringBuilder();
            renderBody(m.body(), s, sb);
            return sb.toString();
        };
    }

    private void renderFor(For f, Scope scope, StringBuilder out) {
        Object iterable = eval(f.iterable(), scope);
        List<Object> items = new ArrayList<>(iterate(iterable));
        if (f.filter() != null) {
            Scope filterScope = new Scope(scope);
            List<Object> kept = new ArrayList<>();
            for (Object item : items) {
                bindTargets(f.targets(), item, filterScope);
                if (truthy(eval(f.filter(), filterScope))) kept.add(item);
            }
            items = kept;
        }
        if (items.isEmpty()) {
            // the else block is a scope of its own too: a set in it does not leak
            renderBody(f.otherwise(), new Scope(scope), out);
            return;
        }
        for (int i = 0; i < items.size(); i++) {
            // A scope per iteration, as in Jinja2: a set inside lasts to the end of its iteration, and the next one
            // reads the value from outside the loop again (a namespace is how a value crosses iterations).
            Scope iteration = new Scope(scope);
            bindTargets(f.targets(), items.get(i), iteration);
            iteration.vars.put("loop", loop(items, i));
            try {
                renderBody(f.body(), iteration, out);
            } catch (LoopControl c) {
                if (c.isBreak) break;
            }
        }
    }

    private static Map<String, Object> loop(List<Object> items, int i) {
        Map<String, Object> loop = new HashMap<>();
        int n = items.size();
        loop.put("index", (long) i + 1);
        loop.put("index0", (long) i);
        loop.put("revindex", (long) (n - i));
        loop.put("revindex0", (long) (n - i - 1));
        loop.put("first", i == 0);
        loop.put("last", i == n - 1);
        loop.put("length", (long) n);
        loop.put("previtem", i > 0 ? items.get(i - 1) : UNDEFINED);
        loop.put("nextitem", i + 1 < n ? items.get(i + 1) : UNDEFINED);
        loop.put("cycle", (Callable) (args, kw) -> args.isEmpty() ? UNDEFINED : args.get(i % args.size()));
        return loop;
    }

    private static void bindTargets(List<String> targets, Object item, Scope scope) {
        if (targets.size() == 1) {
            scope.vars.put(targets.get(0), item);
            return;
        }
        List<Object> parts = iterate(item);
        if (parts.size() != targets.size()) {
            throw new IllegalArgumentException("cannot unpack " + parts.size() + " values into " + targets.size());
        }
        for (int i = 0; i < targets.size(); i++) scope.vars.put(targets.get(i), parts.get(i));
    }

    private void assign(Expr target, Object value, Scope scope) {
        switch (target) {
            case Name n -> scope.vars.put(n.name(), value);
            case Attr a -> {
                Object obj = eval(a.object(), scope);
                if (!(obj instanceof Namespace ns))
                    throw new IllegalArgumentException("cannot set an attribute of " + typeName(obj));
                ns.put(a.name(), value);
            }
            case TupleExpr t -> {
                List<Object> parts = iterate(value);
                if (parts.size() != t.items().size())
                    throw new IllegalArgumentException("cannot unpack " + parts.size() + " values");
                for (int i = 0; i < parts.size(); i++) assign(t.items().get(i), parts.get(i), scope);
            }
            default -> throw new IllegalArgumentException("cannot assign to this expression");
        }
    }

    private void evalArgs(List<Expr> exprs, Scope scope, List<Object> args, Map<String, Object> kwargs) {
        for (Expr e : exprs) {
            if (e instanceof Kwarg k) kwargs.put(k.name(), eval(k.value(), scope));
            else args.add(eval(e, scope));
        }
    }

    private Object eval(Expr expr, Scope scope) {
        return switch (expr) {
            case Literal l -> l.value();
            case Name n -> scope.get(n.name());
            case ListExpr l -> evalAll(l.items(), scope);
            case TupleExpr t -> evalAll(t.items(), scope);
            case DictExpr d -> {
                Map<String, Object> out = new LinkedHashMap<>();
                for (int i = 0; i < d.keys().size(); i++)
                    out.put(str(eval(d.keys().get(i), scope)), eval(d.values().get(i), scope));
                yield out;
            }
            case Attr a -> attribute(eval(a.object(), scope), a.name());
            case Index i -> index(eval(i.object(), scope), eval(i.index(), scope));
            case SliceExpr s ->
                slice(
                        eval(s.object(), scope),
                        s.start() == null ? null : eval(s.start(), scope),
                        s.stop() == null ? null : eval(s.stop(), scope),
                        s.step() == null ? null : eval(s.step(), scope));
            case Call c -> call(c, scope);
            case Kwarg k -> throw new IllegalArgumentException("keyword argument " + k.name() + " outside a call");
            case Filter f -> {
                Object operand = eval(f.operand(), scope);
                List<Object> args = new ArrayList<>();
                Map<String, Object> kwargs = new LinkedHashMap<>();
                evalArgs(f.args(), scope, args, kwargs);
                yield filter(f.name(), operand, args, kwargs, scope);
            }
            case Test t -> {
                Object operand = eval(t.operand(), scope);
                yield test(t.name(), operand, evalAll(t.args(), scope)) != t.negated();
            }
            case Unary u -> {
                Object v = eval(u.operand(), scope);
                yield switch (u.op()) {
                    case "not" -> !truthy(v);
                    case "-" -> v instanceof Long l ? (Object) (-l) : (Object) (-toDouble(v));
                    default -> v;
                };
            }
            case Binary b -> binary(b, scope);
            case Ternary t -> truthy(eval(t.test(), scope)) ? eval(t.then(), scope) : eval(t.otherwise(), scope);
        };
    }

    /** The values of {@code exprs}, in order, as a list (and a tuple) evaluates to. */
    private List<Object> evalAll(List<Expr> exprs, Scope scope) {
        List<Object> out = new ArrayList<>();
        for (Expr e : exprs) out.add(eval(e, scope));
        return out;
    }

    private Object call(Call c, Scope scope) {
        List<Object> args = new ArrayList<>();
        Map<String, Object> kwargs = new LinkedHashMap<>();
        evalArgs(c.args(), scope, args, kwargs);
        if (c.callee() instanceof Attr a) {
            Object obj = eval(a.object(), scope);
            Object member =
                    obj instanceof Map<?, ?> m && !(obj instanceof Namespace) && m.get(a.name()) instanceof Callable f
                            ? f
                            : null;
            if (member == null && obj instanceof Namespace ns && ns.get(a.name()) instanceof Callable f) member = f;
            if (member != null) return ((Callable) member).call(args, kwargs);
            return Methods.call(obj, a.name(), args, kwargs);
        }
        Object callee = eval(c.callee(), scope);
        if (callee instanceof Callable f) return f.call(args, kwargs);
        throw new IllegalArgumentException(describe(c.callee()) + " is not callable");
    }

    private static String describe(Expr e) {
        return switch (e) {
            case Name n -> "'" + n.name() + "'";
            case Attr a -> "'" + a.name() + "'";
            default -> "the expression";
        };
    }

    private Object binary(Binary b, Scope scope) {
        switch (b.op()) {
            case "and" -> {
                Object l = eval(b.left(), scope);
                return truthy(l) ? eval(b.right(), scope) : l;
            }
            case "or" -> {
                Object l = eval(b.left(), scope);
                return truthy(l) ? l : eval(b.right(), scope);
            }
            default -> {}
        }
        Object l = eval(b.left(), scope), r = eval(b.right(), scope);
        return switch (b.op()) {
            case "~" -> str(l) + str(r);
            case "+" -> {
                if (l instanceof String || r instanceof String) {
                    if (l instanceof String ls && r instanceof String rs) yield ls + rs;
                    throw new IllegalArgumentException("cannot add " + typeName(l) + " and " + typeName(r));
                }
                if (l instanceof List<?> ll && r instanceof List<?> rl) {
                    List<Object> out = new ArrayList<>(ll);
                    out.addAll(rl);
                    yield out;
                }
                yield arithmetic("+", l, r);
            }
            case "-", "*", "/", "//", "%", "**" -> {
                if (b.op().equals("*") && l instanceof String s && r instanceof Long n)
                    yield s.repeat((int) Math.max(0, n));
                if (b.op().equals("*") && l instanceof List<?> list && r instanceof Long n) {
                    List<Object> out = new ArrayList<>();
                    for (long i = 0; i < n; i++) out.addAll(list);
                    yield out;
                }
                yield arithmetic(b.op(), l, r);
            }
            case "==" -> equal(l, r);
            case "!=" -> !equal(l, r);
            case "<", ">", "<=", ">=" -> {
                int c = compare(l, r);
                yield switch (b.op()) {
                    case "<" -> c < 0;
                    case ">" -> c > 0;
                    case "<=" -> c <= 0;
                    default -> c >= 0;
                };
            }
            case "in" -> contains(r, l);
            default -> throw new IllegalArgumentException("unknown operator " + b.op());
        };
    }

    private static Object arithmetic(String op, Object l, Object r) {
        if (l instanceof Boolean lb) l = lb ? 1L : 0L;
        if (r instanceof Boolean rb) r = rb ? 1L : 0L;
        if (!(l instanceof Number) || !(r instanceof Number)) {
            throw new IllegalArgumentException(
                    "unsupported operand types for " + op + ": " + typeName(l) + " and " + typeName(r));
        }
        if (l instanceof Long a && r instanceof Long b) {
            return switch (op) {
                case "+" -> a + b;
                case "-" -> a - b;
                case "*" -> a * b;
                case "/" -> {
                    if (b == 0) throw new IllegalArgumentException("division by zero");
                    yield (double) a / b;
                }
                case "//" -> {
                    if (b == 0) throw new IllegalArgumentException("division by zero");
                    yield Math.floorDiv(a, b);
                }
                case "%" -> {
                    if (b == 0) throw new IllegalArgumentException("modulo by zero");
                    yield Math.floorMod(a, b);
                }
                default -> b >= 0 ? (Object) (long) Math.pow(a, b) : (Object) Math.pow(a, b);
            };
        }
        double a = toDouble(l), b = toDouble(r);
        return switch (op) {
            case "+" -> a + b;
            case "-" -> a - b;
            case "*" -> a * b;
            case "/" -> a / b;
            case "//" -> Math.floor(a / b);
            case "%" -> a - b * Math.floor(a / b);
            default -> Math.pow(a, b);
        };
    }

    // ---------------------------------------------------------------- values

    static boolean truthy(Object v) {
        if (v == null || v == UNDEFINED) return false;
        if (v instanceof Boolean b) return b;
        if (v instanceof Long l) return l != 0;
        if (v instanceof Number n) return n.doubleValue() != 0;
        if (v instanceof String s) return !s.isEmpty();
        if (v instanceof Collection<?> c) return !c.isEmpty();
        if (v instanceof Map<?, ?> m) return !m.isEmpty();
        return true;
    }

    /** Python's str() of a value, as {{ }} prints it. */
    static String str(Object v) {
        if (v instanceof String s) return s;
        if (v == UNDEFINED) return "";
        return repr(v);
    }

    /** Python's repr(): strings quoted inside lists and dicts, True/False/None. */
    private static String repr(Object v) {
        if (v == null) return "None";
        if (v == UNDEFINED) return "";
        if (v instanceof Boolean b) return b ? "True" : "False";
        if (v instanceof Double d) return pythonFloat(d);
        if (v instanceof Number n) return n.toString();
        if (v instanceof String s) {
            String q = s.contains("'") && !s.contains("\"") ? "\"" : "'";
            StringBuilder sb = new StringBuilder(q);
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '\n' -> sb.append("\\n");
                    case '\t' -> sb.append("\\t");
                    case '\r' -> sb.append("\\r");
                    case '\\' -> sb.append("\\\\");
                    default -> {
                        if (String.valueOf(c).equals(q)) sb.append('\\');
                        sb.append(c);
                    }
                }
            }
            return sb.append(q).toString();
        }
        if (v instanceof List<?> l) {
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < l.size(); i++) sb.append(i > 0 ? ", " : "").append(repr(l.get(i)));
            return sb.append(']').toString();
        }
        if (v instanceof Map<?, ?> m) {
            StringBuilder sb = new StringBuilder("{");
            boolean first = true;
            for (var e : m.entrySet()) {
                sb.append(first ? "" : ", ")
                        .append(repr(e.getKey()))
                        .append(": ")
                        .append(repr(e.getValue()));
                first = false;
            }
            return sb.append('}').toString();
        }
        if (v instanceof Callable) return "<function>";
        return v.toString();
    }

    private static String pythonFloat(double d) {
        if (Double.isNaN(d)) return "nan";
        if (Double.isInfinite(d)) return d > 0 ? "inf" : "-inf";
        if (d == Math.rint(d) && Math.abs(d) < 1e16) return String.valueOf((long) d) + ".0";
        String s = Double.toString(d);
        if (s.contains("E")) {
            String[] parts = s.split("E");
            int exp = Integer.parseInt(parts[1]);
            String mantissa = parts[0].endsWith(".0") ? parts[0].substring(0, parts[0].length() - 2) : parts[0];
            return mantissa + "e" + (exp < 0 ? "-" : "+") + String.format("%02d", Math.abs(exp));
        }
        return s;
    }

    private static String typeName(Object v) {
        if (v == null) return "NoneType";
        if (v == UNDEFINED) return "undefined";
        if (v instanceof String) return "str";
        if (v instanceof Boolean) return "bool";
        if (v instanceof Long) return "int";
        if (v instanceof Double) return "float";
        if (v instanceof List<?>) return "list";
        if (v instanceof Map<?, ?>) return "dict";
        return v.getClass().getSimpleName();
    }

    private static long toLong(Object v) {
        if (v instanceof Long l) return l;
        if (v instanceof Number n) return (long) n.doubleValue();
        if (v instanceof Boolean b) return b ? 1 : 0;
        if (v instanceof String s) {
            try {
                return Long.parseLong(s.strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not an integer: " + repr(s));
            }
        }
        throw new IllegalArgumentException("not an integer: " + typeName(v));
    }

    private static double toDouble(Object v) {
        if (v instanceof Number n) return n.doubleValue();
        if (v instanceof Boolean b) return b ? 1 : 0;
        throw new IllegalArgumentException("not a number: " + typeName(v));
    }

    static boolean equal(Object a, Object b) {
        if (a == UNDEFINED || b == UNDEFINED) return a == b;
        if (a instanceof Number x && b instanceof Number y) {
            return x instanceof Long && y instanceof Long
                    ? x.longValue() == y.longValue()
                    : x.doubleValue() == y.doubleValue();
        }
        if (a instanceof Boolean x && b instanceof Number y) return (x ? 1 : 0) == y.doubleValue();
        if (a instanceof Number x && b instanceof Boolean y) return x.doubleValue() == (y ? 1 : 0);
        if (a instanceof List<?> x && b instanceof List<?> y) {
            if (x.size() != y.size()) return false;
            for (int i = 0; i < x.size(); i++) if (!equal(x.get(i), y.get(i))) return false;
            return true;
        }
        return Objects.equals(a, b);
    }

    private static int compare(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y) {
            return x instanceof Long && y instanceof Long
                    ? Long.compare(x.longValue(), y.longValue())
                    : Double.compare(x.doubleValue(), y.doubleValue());
        }
        if (a instanceof String x && b instanceof String y) return x.compareTo(y);
        if (a instanceof Boolean || b instanceof Boolean) return Double.compare(toDouble(a), toDouble(b));
        if (a instanceof List<?> x && b instanceof List<?> y) {
            for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
                int c = compare(x.get(i), y.get(i));
                if (c != 0) return c;
            }
            return Integer.compare(x.size(), y.size());
        }
        throw new IllegalArgumentException("cannot compare " + typeName(a) + " with " + typeName(b));
    }

    private static boolean contains(Object container, Object item) {
        if (container instanceof String s) {
            if (!(item instanceof String i))
                throw new IllegalArgumentException("'in <string>' needs a string, not " + typeName(item));
            return s.contains(i);
        }
        if (container instanceof List<?> l) {
            for (Object o : l) if (equal(o, item)) return true;
            return false;
        }
        if (container instanceof Map<?, ?> m) return m.containsKey(item instanceof String ? item : str(item));
        if (container == UNDEFINED || container == null) {
            throw new IllegalArgumentException("'in' needs a string, list or dict, not " + typeName(container));
        }
        return false;
    }

    /** What a for loop goes over: a list's items, a dict's keys, a string's characters. */
    static List<Object> iterate(Object v) {
        if (v == null) throw new IllegalArgumentException("'NoneType' object is not iterable");
        if (v == UNDEFINED) return List.of();
        if (v instanceof List<?> l) return new ArrayList<>(l);
        if (v instanceof Map<?, ?> m) return new ArrayList<>(m.keySet());
        if (v instanceof String s) {
            List<Object> out = new ArrayList<>();
            s.codePoints().forEach(cp -> out.add(new String(Character.toChars(cp))));
            return out;
        }
        throw new IllegalArgumentException("'" + typeName(v) + "' object is not iterable");
    }

    /** A dict's value by name; anything else (a method named without a call, a missing key) is undefined. */
    private static Object attribute(Object obj, String name) {
        return obj instanceof Map<?, ?> m && m.containsKey(name) ? m.get(name) : UNDEFINED;
    }

    private static Object index(Object obj, Object key) {
        if (obj instanceof Map<?, ?> m) {
            Object k = key instanceof String ? key : str(key);
            return m.containsKey(k) ? m.get(k) : UNDEFINED;
        }
        if (obj instanceof List<?> l) {
            long i = toLong(key);
            if (i < 0) i += l.size();
            if (i < 0 || i >= l.size()) throw new IllegalArgumentException("list index out of range");
            return l.get((int) i);
        }
        if (obj instanceof String s) {
            int[] cps = s.codePoints().toArray();
            long i = toLong(key);
            if (i < 0) i += cps.length;
            if (i < 0 || i >= cps.length) throw new IllegalArgumentException("string index out of range");
            return new String(cps, (int) i, 1);
        }
        if (obj == UNDEFINED) return UNDEFINED;
        throw new IllegalArgumentException("'" + typeName(obj) + "' object is not subscriptable");
    }

    /** Python's slice: negative bounds count from the end, a negative step goes backwards. */
    private static Object slice(Object obj, Object startV, Object stopV, Object stepV) {
        List<Object> items;
        boolean string = obj instanceof String;
        if (obj instanceof List<?> l) items = new ArrayList<>(l);
        else if (string) items = iterate(obj);
        else throw new IllegalArgumentException("'" + typeName(obj) + "' object cannot be sliced");
        int n = items.size();
        long step = stepV == null ? 1 : toLong(stepV);
        if (step == 0) throw new IllegalArgumentException("slice step cannot be zero");
        long start, stop;
        if (step > 0) {
            start = startV == null ? 0 : clamp(toLong(startV), n, 0, n);
            stop = stopV == null ? n : clamp(toLong(stopV), n, 0, n);
        } else {
            start = startV == null ? n - 1 : clamp(toLong(startV), n, -1, n - 1);
            stop = stopV == null ? -1 : clamp(toLong(stopV), n, -1, n - 1);
        }
        List<Object> out = new ArrayList<>();
        for (long i = start; step > 0 ? i < stop : i > stop; i += step) out.add(items.get((int) i));
        if (!string) return out;
        StringBuilder sb = new StringBuilder();
        for (Object o : out) sb.append(o);
        return sb.toString();
    }

    private static long clamp(long i, int n, long lo, long hi) {
        if (i < 0) i += n;
        return Math.max(lo, Math.min(hi, i));
    }

    // ---------------------------------------------------------------- tests and filters

    private static boolean test(String name, Object v, List<Object> args) {
        return switch (name) {
            case "defined" -> v != UNDEFINED;
            case "undefined" -> v == UNDEFINED;
            case "none" -> v == null;
            case "string" -> v instanceof String;
            case "number" -> v instanceof Long || v instanceof Double;
            case "integer" -> v instanceof Long;
            case "float" -> v instanceof Double;
            case "boolean" -> v instanceof Boolean;
            case "true" -> Boolean.TRUE.equals(v);
            case "false" -> Boolean.FALSE.equals(v);
            case "mapping" -> v instanceof Map<?, ?>;
            case "sequence", "iterable" -> v instanceof List<?> || v instanceof String || v instanceof Map<?, ?>;
            case "callable" -> v instanceof Callable;
            case "odd" -> toLong(v) % 2 != 0;
            case "even" -> toLong(v) % 2 == 0;
            case "divisibleby" -> toLong(v) % toLong(args.get(0)) == 0;
            case "eq", "equalto", "==" -> equal(v, args.get(0));
            case "ne", "!=" -> !equal(v, args.get(0));
            case "lt", "lessthan" -> compare(v, args.get(0)) < 0;
            case "gt", "greaterthan" -> compare(v, args.get(0)) > 0;
            case "le" -> compare(v, args.get(0)) <= 0;
            case "ge" -> compare(v, args.get(0)) >= 0;
            case "sameas" -> v == args.get(0) || (v instanceof Boolean && v.equals(args.get(0)));
            case "in" -> contains(args.get(0), v);
            case "lower" -> v instanceof String s && s.equals(s.toLowerCase(Locale.ROOT));
            case "upper" -> v instanceof String s && s.equals(s.toUpperCase(Locale.ROOT));
            default -> throw new IllegalArgumentException("unknown test '" + name + "'");
        };
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private Object filter(String name, Object v, List<Object> args, Map<String, Object> kwargs, Scope scope) {
        Function<Integer, Object> arg = i -> i < args.size() ? args.get(i) : null;
        return switch (name) {
            case "trim" -> Methods.strip(str(v), args.isEmpty() ? null : str(args.get(0)), true, true);
            case "upper" -> str(v).toUpperCase(Locale.ROOT);
            case "lower" -> str(v).toLowerCase(Locale.ROOT);
            case "title" -> Methods.title(str(v));
            case "capitalize" -> Methods.capitalize(str(v));
            case "length", "count" -> (long) length(v);
            case "first" -> {
                List<Object> items = iterate(v);
                yield items.isEmpty() ? UNDEFINED : items.get(0);
            }
            case "last" -> {
                List<Object> items = iterate(v);
                yield items.isEmpty() ? UNDEFINED : items.get(items.size() - 1);
            }
            case "join" -> {
                String sep = arg.apply(0) == null ? str(kwargs.getOrDefault("d", "")) : str(arg.apply(0));
                Object attr = kwargs.containsKey("attribute") ? kwargs.get("attribute") : arg.apply(1);
                StringBuilder sb = new StringBuilder();
                boolean first = true;
                for (Object o : iterate(v)) {
                    sb.append(first ? "" : sep).append(str(attr == null ? o : attribute(o, str(attr))));
                    first = false;
                }
                yield sb.toString();
            }
            case "default", "d" -> {
                Object fallback = args.isEmpty() ? kwargs.getOrDefault("default_value", "") : args.get(0);
                boolean bool = truthy(args.size() > 1 ? args.get(1) : kwargs.getOrDefault("boolean", false));
                yield v == UNDEFINED || (bool && !truthy(v)) ? fallback : v;
            }
            case "tojson" -> toJson(v, args.isEmpty() ? kwargs.get("indent") : args.get(0));
            case "string" -> str(v);
            case "int" -> {
                if (v instanceof Double d) yield (long) d.doubleValue();
                try {
                    yield toLong(v);
                } catch (IllegalArgumentException e) {
                    yield args.isEmpty() ? 0L : args.get(0);
                }
            }
            case "float" -> v instanceof String s ? Double.parseDouble(s.strip()) : toDouble(v);
            case "abs" -> v instanceof Long l ? (Object) Math.abs(l) : (Object) Math.abs(toDouble(v));
            case "round" -> {
                int precision = arg.apply(0) == null ? 0 : (int) toLong(arg.apply(0));
                double scale = Math.pow(10, precision);
                yield Math.rint(toDouble(v) * scale) / scale;
            }
            case "list" -> iterate(v);
            case "reverse" -> {
                if (v instanceof String s) yield new StringBuilder(s).reverse().toString();
                List<Object> items = iterate(v);
                Collections.reverse(items);
                yield items;
            }
            case "sort" -> {
                List<Object> items = iterate(v);
                Object attr = kwargs.get("attribute");
                Comparator<Object> cmp = (a, b) ->
                        compare(attr == null ? a : attribute(a, str(attr)), attr == null ? b : attribute(b, str(attr)));
                if (truthy(kwargs.getOrDefault("reverse", arg.apply(0)))) cmp = cmp.reversed();
                items.sort(cmp);
                yield items;
            }
            case "unique" -> new ArrayList<>(new LinkedHashSet<>(iterate(v)));
            case "sum" -> {
                Object total = 0L;
                for (Object o : iterate(v)) total = arithmetic("+", total, o);
                yield total;
            }
            case "min", "max" -> {
                List<Object> items = iterate(v);
                if (items.isEmpty()) yield UNDEFINED;
                Object best = items.get(0);
                for (Object o : items) if (name.equals("min") ? compare(o, best) < 0 : compare(o, best) > 0) best = o;
                yield best;
            }
            case "items" -> {
                if (!(v instanceof Map<?, ?>))
                    throw new IllegalArgumentException("items needs a dict, not " + typeName(v));
                yield Methods.call(v, "items", List.of(), Map.of());
            }
            case "dictsort" -> {
                if (!(v instanceof Map<?, ?> m))
                    throw new IllegalArgumentException("dictsort needs a dict, not " + typeName(v));
                List<Object> out = new ArrayList<>();
                m.forEach((k, val) -> out.add(Arrays.asList(k, val)));
                out.sort((a, b) -> compare(((List<?>) a).get(0), ((List<?>) b).get(0)));
                yield out;
            }
            case "map" -> {
                List<Object> out = new ArrayList<>();
                if (kwargs.containsKey("attribute")) {
                    String attr = str(kwargs.get("attribute"));
                    for (Object o : iterate(v)) {
                        Object a = attribute(o, attr);
                        out.add(a == UNDEFINED && kwargs.containsKey("default") ? kwargs.get("default") : a);
                    }
                } else {
                    String f = str(args.get(0));
                    for (Object o : iterate(v)) out.add(filter(f, o, args.subList(1, args.size()), Map.of(), scope));
                }
                yield out;
            }
            case "select", "reject" -> {
                List<Object> out = new ArrayList<>();
                for (Object o : iterate(v)) {
                    boolean pass = args.isEmpty() ? truthy(o) : test(str(args.get(0)), o, args.subList(1, args.size()));
                    if (pass == name.equals("select")) out.add(o);
                }
                yield out;
            }
            case "selectattr", "rejectattr" -> {
                List<Object> out = new ArrayList<>();
                String attr = str(args.get(0));
                for (Object o : iterate(v)) {
                    Object a = attribute(o, attr);
                    boolean pass =
                            args.size() < 2 ? truthy(a) : test(str(args.get(1)), a, args.subList(2, args.size()));
                    if (pass == name.equals("selectattr")) out.add(o);
                }
                yield out;
            }
            case "replace" -> {
                String s = str(v), from = str(args.get(0)), to = str(args.get(1));
                yield Methods.replace(s, from, to, args.size() > 2 ? toLong(args.get(2)) : -1);
            }
            case "indent" -> {
                Object w = args.isEmpty() ? kwargs.getOrDefault("width", 4L) : args.get(0);
                String pad = w instanceof String s ? s : " ".repeat((int) toLong(w));
                boolean first = truthy(args.size() > 1 ? args.get(1) : kwargs.getOrDefault("first", false));
                boolean blank = truthy(args.size() > 2 ? args.get(2) : kwargs.getOrDefault("blank", false));
                String[] lines = str(v).split("\n", -1);
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < lines.length; i++) {
                    if (i > 0) sb.append('\n');
                    boolean indent = (i > 0 || first) && (blank || !lines[i].isBlank());
                    sb.append(indent ? pad : "").append(lines[i]);
                }
                yield sb.toString();
            }
            case "safe" -> v;
            case "e", "escape" ->
                str(v).replace("&", "&amp;")
                        .replace("<", "&lt;")
                        .replace(">", "&gt;")
                        .replace("\"", "&#34;")
                        .replace("'", "&#39;");
            case "wordcount" -> (long) (str(v).isBlank() ? 0 : str(v).strip().split("\\s+").length);
            case "format" -> Methods.percentFormat(str(v), args);
            case "batch" -> {
                List<Object> items = iterate(v), out = new ArrayList<>();
                int size = (int) toLong(args.get(0));
                for (int i = 0; i < items.size(); i += size)
                    out.add(new ArrayList<>(items.subList(i, Math.min(items.size(), i + size))));
                yield out;
            }
            default -> throw new IllegalArgumentException("unknown filter '" + name + "'");
        };
    }

    private static int length(Object v) {
        if (v instanceof String s) return s.codePointCount(0, s.length());
        if (v instanceof Collection<?> c) return c.size();
        if (v instanceof Map<?, ?> m) return m.size();
        if (v == UNDEFINED) return 0;
        throw new IllegalArgumentException("object of type '" + typeName(v) + "' has no len()");
    }

    /** transformers' tojson: json.dumps with ensure_ascii off, Python's ", " and ": " separators, keys in order. */
    static String toJson(Object v, Object indent) {
        StringBuilder sb = new StringBuilder();
        writeJson(v, indent == null ? -1 : (int) toLong(indent), 0, sb);
        return sb.toString();
    }

    private static void writeJson(Object v, int indent, int depth, StringBuilder sb) {
        if (v == null || v == UNDEFINED) {
            sb.append("null");
        } else if (v instanceof Boolean b) {
            sb.append(b);
        } else if (v instanceof Double d) {
            sb.append(
                    Double.isNaN(d)
                            ? "NaN"
                            : Double.isInfinite(d) ? (d > 0 ? "Infinity" : "-Infinity") : pythonFloat(d));
        } else if (v instanceof Number n) {
            sb.append(n);
        } else if (v instanceof String s) {
            try {
                sb.append(JSON.writeValueAsString(s));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        } else if (v instanceof List<?> l) {
            if (l.isEmpty()) {
                sb.append("[]");
                return;
            }
            sb.append('[');
            for (int i = 0; i < l.size(); i++) {
                sb.append(i > 0 ? (indent >= 0 ? "," : ", ") : "");
                newline(indent, depth + 1, sb);
                writeJson(l.get(i), indent, depth + 1, sb);
            }
            newline(indent, depth, sb);
            sb.append(']');
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                sb.append("{}");
                return;
            }
            sb.append('{');
            boolean first = true;
            for (var e : m.entrySet()) {
                sb.append(first ? "" : (indent >= 0 ? "," : ", "));
                newline(indent, depth + 1, sb);
                writeJson(str(e.getKey()), indent, depth + 1, sb);
                sb.append(": ");
                writeJson(e.getValue(), indent, depth + 1, sb);
                first = false;
            }
            newline(indent, depth, sb);
            sb.append('}');
        } else {
            throw new IllegalArgumentException("Object of type " + typeName(v) + " is not JSON serializable");
        }
    }

    private static void newline(int indent, int depth, StringBuilder sb) {
        if (indent >= 0) sb.append('\n').append(" ".repeat(indent * depth));
    }

    static String strftime(String format, ZonedDateTime t) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 >= format.length()) {
                sb.append(c);
                continue;
            }
            char f = format.charAt(++i);
            switch (f) {
                case 'd' -> sb.append(String.format("%02d", t.getDayOfMonth()));
                case 'm' -> sb.append(String.format("%02d", t.getMonthValue()));
                case 'Y' -> sb.append(t.getYear());
                case 'y' -> sb.append(String.format("%02d", t.getYear() % 100));
                case 'H' -> sb.append(String.format("%02d", t.getHour()));
                case 'I' -> sb.append(String.format("%02d", (t.getHour() + 11) % 12 + 1));
                case 'M' -> sb.append(String.format("%02d", t.getMinute()));
                case 'S' -> sb.append(String.format("%02d", t.getSecond()));
                case 'p' -> sb.append(t.getHour() < 12 ? "AM" : "PM");
                case 'b' -> sb.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'B' -> sb.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'a' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'A' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'j' -> sb.append(String.format("%03d", t.getDayOfYear()));
                case '%' -> sb.append('%');
                default -> sb.append('%').append(f);
            }
        }
        return sb.toString();
    }

    /** Python's methods on str, list and dict, called as {@code value.name(args)}. */
    private static final class Methods {
        static Object call(Object obj, String name, List<Object> args, Map<String, Object> kwargs) {
            Function<Integer, Object> arg = i -> i < args.size() ? args.get(i) : null;
            if (obj instanceof String s) {
                return switch (name) {
                    case "strip" -> strip(s, arg.apply(0) == null ? null : str(arg.apply(0)), true, true);
                    case "lstrip" -> strip(s, arg.apply(0) == null ? null : str(arg.apply(0)), true, false);
                    case "rstrip" -> strip(s, arg.apply(0) == null ? null : str(arg.apply(0)), false, true);
                    case "startswith" -> anyOf(arg.apply(0), s::startsWith);
                    case "endswith" -> anyOf(arg.apply(0), s::endsWith);
                    case "split" ->
                        split(
                                s,
                                arg.apply(0) == null ? (String) null : str(arg.apply(0)),
                                arg.apply(1) == null ? -1 : toLong(arg.apply(1)));
                    case "rsplit" ->
                        rsplit(
                                s,
                                arg.apply(0) == null ? null : str(arg.apply(0)),
                                arg.apply(1) == null ? -1 : toLong(arg.apply(1)));
                    case "splitlines" -> {
                        List<Object> lines = new ArrayList<>(List.of(s.split("\\r\\n|\\n|\\r", -1)));
                        if (s.isEmpty() || s.endsWith("\n") || s.endsWith("\r"))
                            lines.removeLast(); // no empty last line
                        yield lines;
                    }
                    case "replace" ->
                        replace(
                                s,
                                str(args.get(0)),
                                str(args.get(1)),
                                arg.apply(2) == null ? -1 : toLong(arg.apply(2)));
                    case "upper" -> s.toUpperCase(Locale.ROOT);
                    case "lower" -> s.toLowerCase(Locale.ROOT);
                    case "title" -> title(s);
                    case "capitalize" -> capitalize(s);
                    case "find" -> (long) s.indexOf(str(args.get(0)));
                    case "rfind" -> (long) s.lastIndexOf(str(args.get(0)));
                    case "index" -> {
                        int i = s.indexOf(str(args.get(0)));
                        if (i < 0) throw new IllegalArgumentException("substring not found");
                        yield (long) i;
                    }
                    case "count" -> {
                        String sub = str(args.get(0));
                        long n = 0;
                        for (int i = s.indexOf(sub); i >= 0 && !sub.isEmpty(); i = s.indexOf(sub, i + sub.length()))
                            n++;
                        yield n;
                    }
                    case "join" -> {
                        StringBuilder sb = new StringBuilder();
                        boolean first = true;
                        for (Object o : iterate(args.get(0))) {
                            sb.append(first ? "" : s).append(str(o));
                            first = false;
                        }
                        yield sb.toString();
                    }
                    case "isdigit" -> !s.isEmpty() && s.chars().allMatch(Character::isDigit);
                    case "isalpha" -> !s.isEmpty() && s.chars().allMatch(Character::isLetter);
                    case "isalnum" -> !s.isEmpty() && s.chars().allMatch(Character::isLetterOrDigit);
                    case "isspace" -> !s.isEmpty() && s.chars().allMatch(Character::isWhitespace);
                    case "islower" -> s.equals(s.toLowerCase(Locale.ROOT)) && !s.equals(s.toUpperCase(Locale.ROOT));
                    case "isupper" -> s.equals(s.toUpperCase(Locale.ROOT)) && !s.equals(s.toLowerCase(Locale.ROOT));
                    case "format" -> braceFormat(s, args, kwargs);
                    default -> throw new IllegalArgumentException("'str' object has no method '" + name + "'");
                };
            }
            if (obj instanceof List<?> l) {
                return switch (name) {
                    case "index" -> {
                        for (int i = 0; i < l.size(); i++) if (equal(l.get(i), args.get(0))) yield (long) i;
                        throw new IllegalArgumentException("value is not in list");
                    }
                    case "count" ->
                        l.stream().filter(o -> equal(o, args.get(0))).count();
                    default -> throw new IllegalArgumentException("'list' object has no method '" + name + "'");
                };
            }
            if (obj instanceof Map<?, ?> m) {
                return switch (name) {
                    case "items" -> {
                        List<Object> out = new ArrayList<>();
                        m.forEach((k, v) -> out.add(Arrays.asList(k, v)));
                        yield out;
                    }
                    case "keys" -> new ArrayList<Object>(m.keySet());
                    case "values" -> new ArrayList<Object>(m.values());
                    case "get" ->
                        m.containsKey(args.get(0)) ? m.get(args.get(0)) : args.size() > 1 ? args.get(1) : null;
                    default -> throw new IllegalArgumentException("'dict' object has no method '" + name + "'");
                };
            }
            throw new IllegalArgumentException("'" + typeName(obj) + "' object has no method '" + name + "'");
        }

        private static boolean anyOf(Object prefixes, Predicate<String> test) {
            if (prefixes instanceof List<?> l) return l.stream().anyMatch(p -> test.test(str(p)));
            return test.test(str(prefixes));
        }

        /** Python's strip: whitespace, or any of {@code chars}, from the chosen ends. */
        static String strip(String s, String chars, boolean left, boolean right) {
            int start = 0, end = s.length();
            if (left) while (start < end && strippable(s.charAt(start), chars)) start++;
            if (right) while (end > start && strippable(s.charAt(end - 1), chars)) end--;
            return s.substring(start, end);
        }

        private static boolean strippable(char c, String chars) {
            return chars == null
                    ? Character.isWhitespace(c) || Character.isSpaceChar(c) || c == '\u0085'
                    : chars.indexOf(c) >= 0;
        }

        static List<Object> split(String s, String sep, long maxSplit) {
            List<Object> out = new ArrayList<>();
            if (sep == null) {
                String rest = strip(s, null, true, false);
                while (!rest.isEmpty()) {
                    if (maxSplit >= 0 && out.size() == maxSplit) {
                        out.add(rest);
                        return out;
                    }
                    int i = 0;
                    while (i < rest.length() && !strippable(rest.charAt(i), null)) i++;
                    out.add(rest.substring(0, i));
                    rest = strip(rest.substring(i), null, true, false);
                }
                return out;
            }
            if (sep.isEmpty()) throw new IllegalArgumentException("empty separator");
            int pos = 0;
            for (int i = s.indexOf(sep); i >= 0 && (maxSplit < 0 || out.size() < maxSplit); i = s.indexOf(sep, pos)) {
                out.add(s.substring(pos, i));
                pos = i + sep.length();
            }
            out.add(s.substring(pos));
            return out;
        }

        static List<Object> rsplit(String s, String sep, long maxSplit) {
            if (sep == null || maxSplit < 0) return split(s, sep, maxSplit);
            List<Object> out = new ArrayList<>();
            int end = s.length();
            for (int i = s.lastIndexOf(sep, end - sep.length());
                    i >= 0 && out.size() < maxSplit;
                    i = s.lastIndexOf(sep, end - sep.length())) {
                out.add(0, s.substring(i + sep.length(), end));
                end = i;
            }
            out.add(0, s.substring(0, end));
            return out;
        }

        static String replace(String s, String from, String to, long count) {
            if (count < 0) return s.replace(from, to);
            StringBuilder sb = new StringBuilder();
            int pos = 0;
            for (long n = 0; n < count; n++) {
                int i = s.indexOf(from, pos);
                if (i < 0) break;
                sb.append(s, pos, i).append(to);
                pos = i + from.length();
            }
            return sb.append(s.substring(pos)).toString();
        }

        static String title(String s) {
            StringBuilder sb = new StringBuilder();
            boolean inWord = false;
            for (char c : s.toCharArray()) {
                sb.append(inWord ? Character.toLowerCase(c) : Character.toUpperCase(c));
                inWord = Character.isLetter(c);
            }
            return sb.toString();
        }

        static String capitalize(String s) {
            return s.isEmpty()
                    ? s
                    : Character.toUpperCase(s.charAt(0)) + s.substring(1).toLowerCase(Locale.ROOT);
        }

        /** str.format with {}, {0} and {name} fields (no format specs). */
        static String braceFormat(String s, List<Object> args, Map<String, Object> kwargs) {
            StringBuilder sb = new StringBuilder();
            int auto = 0;
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '{' && i + 1 < s.length() && s.charAt(i + 1) == '{') {
                    sb.append('{');
                    i++;
                } else if (c == '}' && i + 1 < s.length() && s.charAt(i + 1) == '}') {
                    sb.append('}');
                    i++;
                } else if (c == '{') {
                    int end = s.indexOf('}', i);
                    if (end < 0) throw new IllegalArgumentException("single '{' in format string");
                    String field = s.substring(i + 1, end);
                    Object v = field.isEmpty()
                            ? args.get(auto++)
                            : field.chars().allMatch(Character::isDigit)
                                    ? args.get(Integer.parseInt(field))
                                    : kwargs.get(field);
                    sb.append(str(v));
                    i = end;
                } else {
                    sb.append(c);
                }
            }
            return sb.toString();
        }

        /** The format filter: Python's % formatting with %s, %d and %%. */
        static String percentFormat(String s, List<Object> args) {
            StringBuilder sb = new StringBuilder();
            int next = 0;
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c != '%' || i + 1 >= s.length()) {
                    sb.append(c);
                    continue;
                }
                char f = s.charAt(++i);
                switch (f) {
                    case '%' -> sb.append('%');
                    case 's' -> sb.append(str(args.get(next++)));
                    case 'd' -> sb.append(toLong(args.get(next++)));
                    default -> sb.append('%').append(f);
                }
            }
            return sb.toString();
        }
    }
}
