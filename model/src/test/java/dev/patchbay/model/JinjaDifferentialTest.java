package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
 * {@link Jinja} against @huggingface/jinja over template cases one feature at a time (whitespace control, loops and
 * scoping, operators, string methods, slicing, filters, tests, macros), from {@link HuggingFaceReference}. A case with
 * a {@code jinja2} output is where @huggingface/jinja departs from Jinja2, which transformers renders with: there
 * Patchbay must give Jinja2's output, and the reference must still differ, so the list stays true.
 */
class JinjaDifferentialTest {
    @TestFactory
    Stream<DynamicTest> rendersAsHuggingFaceJinja() throws Exception {
        return StreamSupport.stream(HuggingFaceReference.get().get("templates").spliterator(), false)
                .map(c -> dynamicTest(c.get("name").asText(), () -> check(c)));
    }

    @Test
    void aCorruptedReferenceFails() throws Exception {
        JsonNode loops = StreamSupport.stream(HuggingFaceReference.get().get("templates").spliterator(), false)
                .filter(c -> c.get("name").asText().equals("loop variables")).findFirst().orElseThrow();
        check(loops);
        ObjectNode wrong = ((ObjectNode) loops.deepCopy()).put("rendered", loops.get("rendered").asText().replace("1/0", "0/0"));
        assertThatThrownBy(() -> check(wrong)).isInstanceOf(AssertionError.class);
    }

    static void check(JsonNode c) {
        Map<String, Object> variables = new LinkedHashMap<>();
        c.get("variables").properties().forEach(e -> variables.put(e.getKey(), value(e.getValue())));
        Jinja template = new Jinja(c.get("template").asText());
        if (c.has("error")) {
            assertThatThrownBy(() -> template.render(variables)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(c.get("error").asText());
            return;
        }
        String rendered = template.render(variables);
        if (c.has("jinja2")) {
            assertThat(rendered).as("Jinja2's output").isEqualTo(c.get("jinja2").asText());
            assertThat(c.get("rendered").asText()).as("@huggingface/jinja still differs here").isNotEqualTo(rendered);
            return;
        }
        assertThat(rendered).isEqualTo(c.get("rendered").asText());
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
