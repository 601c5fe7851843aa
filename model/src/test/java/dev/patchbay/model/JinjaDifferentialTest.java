package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * {@link Jinja} over template cases one feature at a time (whitespace control, loops and scoping, operators, string
 * methods, slicing, filters, tests, macros), against Jinja2 itself ({@link Jinja2Reference}), the engine transformers
 * renders chat templates with. The cases are also rendered by @huggingface/jinja ({@link HuggingFaceReference}); where
 * it departs from Jinja2, Jinja2 decides, and the departures are named below so the list stays true.
 */
class JinjaDifferentialTest {
    /** Where the pinned @huggingface/jinja gives another answer than Jinja2, and what it gives. */
    static final Map<String, String> HUGGINGFACE_JINJA_DEPARTS = Map.ofEntries(
            Map.entry("set in a loop does not leak", "a set carries into the next iteration"),
            Map.entry("a set in one iteration is gone in the next", "a set carries into the next iteration"),
            Map.entry("nested loops start each iteration from outside", "a set carries into the next iteration"),
            Map.entry("modulo and list equality", "% takes the dividend's sign; equal lists compare unequal"),
            Map.entry("printing booleans", "true and false in lower case"),
            Map.entry("printing none", "none prints as nothing"),
            Map.entry("printing a list", "a list prints as JSON"),
            Map.entry("strip with characters", "strip, lstrip and rstrip ignore the characters given"),
            Map.entry("title and capitalize lower the rest", "the rest of each word is left as it is"),
            Map.entry("raw blocks and plus keep their text", "fails: no raw blocks"),
            Map.entry("string repetition, string order, divisibleby", "fails: divisibleby without parentheses"),
            Map.entry("string methods find, count, rsplit, join", "fails: no find, count or rsplit"),
            Map.entry("filters sum, min, max, round, select, wordcount, format", "fails: no sum filter"),
            Map.entry("loop cycle", "fails: no loop.cycle"));

    @TestFactory
    Stream<DynamicTest> rendersAsJinja2() throws Exception {
        JsonNode cases = cases();
        return StreamSupport.stream(cases.spliterator(), false)
                .map(c -> dynamicTest(
                        c.get("name").asText(),
                        () -> check(c, Jinja2Reference.template(c.get("name").asText()))));
    }

    /** Each case either agrees between the two references or is named above as a departure, and not both. */
    @TestFactory
    Stream<DynamicTest> huggingFaceJinjaDepartsFromJinja2OnlyWhereNamed() throws Exception {
        JsonNode huggingFace = HuggingFaceReference.get().get("templates");
        assertThat(HUGGINGFACE_JINJA_DEPARTS.keySet())
                .as("departures name cases that exist")
                .isSubsetOf(StreamSupport.stream(huggingFace.spliterator(), false)
                        .map(c -> c.get("name").asText())
                        .toList());
        return StreamSupport.stream(huggingFace.spliterator(), false)
                .map(c -> dynamicTest(c.get("name").asText(), () -> {
                    String name = c.get("name").asText();
                    JsonNode jinja2 = Jinja2Reference.template(name);
                    if (HUGGINGFACE_JINJA_DEPARTS.containsKey(name)) {
                        assertThat(agree(c, jinja2))
                                .as("@huggingface/jinja still departs from Jinja2 here: "
                                        + HUGGINGFACE_JINJA_DEPARTS.get(name))
                                .isFalse();
                    } else if (!agree(c, jinja2)) {
                        throw new AssertionError(
                                "@huggingface/jinja departs from Jinja2 in a case not named as a departure:\n"
                                        + "  @huggingface/jinja: " + outcome(c) + "\n  Jinja2:             "
                                        + outcome(jinja2));
                    }
                }));
    }

    @Test
    void everyCaseIsInBothReferences() throws Exception {
        List<String> names = StreamSupport.stream(cases().spliterator(), false)
                .map(c -> c.get("name").asText())
                .toList();
        assertThat(names).doesNotHaveDuplicates();
        assertThat(StreamSupport.stream(Jinja2Reference.get().get("templates").spliterator(), false)
                        .map(c -> c.get("name").asText()))
                .containsExactlyElementsOf(names);
        assertThat(StreamSupport.stream(
                                HuggingFaceReference.get().get("templates").spliterator(), false)
                        .map(c -> c.get("name").asText()))
                .containsExactlyElementsOf(names);
    }

    /** The check can fail: Jinja2's rendering with one character changed, or an error where it rendered, does not pass. */
    @Test
    void aCorruptedReferenceFails() throws Exception {
        JsonNode loops = StreamSupport.stream(cases().spliterator(), false)
                .filter(c -> c.get("name").asText().equals("loop variables"))
                .findFirst()
                .orElseThrow();
        JsonNode jinja2 = Jinja2Reference.template("loop variables");
        check(loops, jinja2);
        ObjectNode wrong = ((ObjectNode) jinja2.deepCopy())
                .put("rendered", jinja2.get("rendered").asText().replace("1/0", "0/0"));
        assertThatThrownBy(() -> check(loops, wrong)).isInstanceOf(AssertionError.class);
        ObjectNode refused =
                ((ObjectNode) jinja2.deepCopy()).put("error", "refused").put("error_type", "TemplateError");
        refused.remove("rendered");
        assertThatThrownBy(() -> check(loops, refused)).isInstanceOf(AssertionError.class);
    }

    /** Patchbay renders the case {@code c} as Jinja2 did: the same text, or an error (with the template's message). */
    static void check(JsonNode c, JsonNode jinja2) {
        Map<String, Object> variables = new LinkedHashMap<>();
        c.get("variables").properties().forEach(e -> variables.put(e.getKey(), value(e.getValue())));
        Jinja template = new Jinja(c.get("template").asText());
        if (jinja2.has("error")) {
            var thrown =
                    assertThatThrownBy(() -> template.render(variables)).isInstanceOf(IllegalArgumentException.class);
            if (Jinja2Reference.raisedByTemplate(jinja2))
                thrown.hasMessageContaining(jinja2.get("error").asText());
            return;
        }
        assertThat(template.render(variables)).isEqualTo(jinja2.get("rendered").asText());
    }

    /** A reference's answer: the text it rendered, or its error's message. */
    private static String outcome(JsonNode rendering) {
        if (rendering.has("rendered"))
            return "rendered: " + rendering.get("rendered").asText();
        return "error: " + rendering.get("error").asText();
    }

    private static boolean agree(JsonNode huggingFace, JsonNode jinja2) {
        // A raise_exception's message is the template's own; any other failure is worded by each engine its own way.
        if (jinja2.has("rendered") || Jinja2Reference.raisedByTemplate(jinja2)) {
            return outcome(huggingFace).equals(outcome(jinja2));
        }
        return huggingFace.has("error");
    }

    private static JsonNode cases() throws IOException {
        return new ObjectMapper().readTree(HuggingFaceReference.TEMPLATES.toFile());
    }

    /** JSON as the template sees it: strings, Long or Double, booleans, null, lists and dicts in order. */
    static Object value(JsonNode n) {
        if (n.isTextual()) return n.asText();
        if (n.isIntegralNumber()) return n.asLong();
        if (n.isNumber()) return n.asDouble();
        if (n.isBoolean()) return n.asBoolean();
        if (n.isNull()) return null;
        if (n.isArray()) {
            List<Object> out = new ArrayList<>();
            n.forEach(x -> out.add(value(x)));
            return out;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        n.properties().forEach(e -> out.put(e.getKey(), value(e.getValue())));
        return out;
    }
}
