package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link Jinja} features @huggingface/jinja does not render, so {@link JinjaDifferentialTest} cannot cover them;
 * the expected outputs are Jinja2's.
 */
class JinjaTest {
    private static String render(String template, Map<String, Object> variables) {
        return new Jinja(template).render(variables);
    }

    private static String render(String template) {
        return render(template, Map.of());
    }

    @Test
    void rawBlocksAndPlusKeepTheirText() {
        assertThat(render("{% raw %}{{ x }} {% if %}{% endraw %}!")).isEqualTo("{{ x }} {% if %}!");
        assertThat(render("    {%+ if true %}kept{% endif %}")).isEqualTo("    kept");
        assertThat(render("    {% if true %}stripped{% endif %}")).isEqualTo("stripped");
    }

    @Test
    void pythonOperatorsAndMethodsBeyondTheReference() {
        assertThat(render("{{ 'ab' * 3 }} {{ 'a' < 'b' }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }}"))
                .isEqualTo("ababab True True False");
        assertThat(render("{{ s.find('o') }} {{ s.count('l') }} {{ s.rsplit(',', 1) }} {{ ', '.join(['x', 'y']) }}",
                Map.of("s", "Hello, world, again"))).isEqualTo("4 3 ['Hello, world', ' again'] x, y");
        assertThat(render("{{ [3, 1, 2]|sum }} {{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }} {{ 2.567|round(2) }} "
                + "{{ [1, 2, 3, 4]|select('odd')|list }} {{ 'a b  c'|wordcount }} {{ '%s-%d'|format('x', 3) }}"))
                .isEqualTo("6 1 3 2.57 [1, 3] 3 x-3");
        assertThat(render("{% for x in range(4) %}{{ loop.cycle('a', 'b') }}{% endfor %}")).isEqualTo("abab");
    }

    @Test
    void macrosCanBeCalledWithABody() {
        assertThat(render("{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}inside{% endcall %}"))
                .isEqualTo("[inside]");
    }

    @Test
    void errorsNameWhatWentWrong() {
        assertThatThrownBy(() -> render("{{ x|no_such_filter }}")).hasMessageContaining("unknown filter 'no_such_filter'");
        assertThatThrownBy(() -> new Jinja("line one\n{% if x %}never closed")).hasMessageContaining("endif");
        assertThatThrownBy(() -> new Jinja("{{ unclosed")).hasMessageContaining("line 1").hasMessageContaining("unclosed");
        assertThatThrownBy(() -> render("{{ raise_exception('Only user and assistant roles') }}"))
                .isInstanceOf(Jinja.TemplateException.class).hasMessage("Only user and assistant roles");
        assertThatThrownBy(() -> render("{{ 'a' + 1 }}")).hasMessageContaining("cannot add str and int");
    }

    @Test
    void messageContentIsDataNotTemplate() {
        // What a user writes is never rendered: a "{% raw %}" or "{{" in content is text.
        Map<String, Object> vars = Map.of("messages", List.of(Map.of("role", "user", "content", "{% raw %} {{ 7 * 7 }}")));
        assertThat(render("{% for m in messages %}{{ m.content }}{% endfor %}", vars)).isEqualTo("{% raw %} {{ 7 * 7 }}");
    }
}
