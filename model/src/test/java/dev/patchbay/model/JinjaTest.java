package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What {@link JinjaDifferentialTest} cannot compare with a reference's output: Patchbay's own error messages, and
 * content that must stay text.
 */
class JinjaTest {
    private static String render(String template, Map<String, Object> variables) {
        return new Jinja(template).render(variables);
    }

    private static String render(String template) {
        return render(template, Map.of());
    }

    @Test
    void errorsNameWhatWentWrong() {
        assertThatThrownBy(() -> render("{{ x|no_such_filter }}"))
                .hasMessageContaining("unknown filter 'no_such_filter'");
        assertThatThrownBy(() -> new Jinja("line one\n{% if x %}never closed")).hasMessageContaining("endif");
        assertThatThrownBy(() -> new Jinja("{{ unclosed"))
                .hasMessageContaining("line 1")
                .hasMessageContaining("unclosed");
        assertThatThrownBy(() -> render("{{ raise_exception('Only user and assistant roles') }}"))
                .isInstanceOf(Jinja.TemplateException.class)
                .hasMessage("Only user and assistant roles");
        assertThatThrownBy(() -> render("{{ 'a' + 1 }}")).hasMessageContaining("cannot add str and int");
    }

    @Test
    void messageContentIsDataNotTemplate() {
        // What a user writes is never rendered: a "{% raw %}" or "{{" in content is text.
        Map<String, Object> vars =
                Map.of("messages", List.of(Map.of("role", "user", "content", "{% raw %} {{ 7 * 7 }}")));
        assertThat(render("{% for m in messages %}{{ m.content }}{% endfor %}", vars))
                .isEqualTo("{% raw %} {{ 7 * 7 }}");
    }
}
