package dev.patchbay.router.prom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PrometheusTextParserTest {
    private final PrometheusTextParser parser = new PrometheusTextParser();

    @Test
    void readsHelpTypeAndSamplesWithLabelsInAnyOrder() throws Exception {
        MetricsPage page = parser.parse("""
                # HELP vllm:num_requests_running Number of requests in model execution batches.
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running{engine="0",model_name="m"} 3.0
                vllm:num_requests_running{model_name="n",engine="1"} 4
                """);
        assertThat(page.types()).containsEntry("vllm:num_requests_running", "gauge");
        assertThat(page.helps())
                .containsEntry("vllm:num_requests_running", "Number of requests in model execution batches.");
        assertThat(page.samples("vllm:num_requests_running")).hasSize(2);
        Sample second = page.samples("vllm:num_requests_running").get(1);
        assertThat(second.labels()).isEqualTo(Map.of("model_name", "n", "engine", "1"));
        assertThat(second.value()).isEqualTo(4.0);
        assertThat(second.timestampMs()).isNull();
    }

    @Test
    void unescapesLabelValues() throws Exception {
        MetricsPage page = parser.parse("m{a=\"say \\\"hi\\\"\",b=\"back\\\\slash\",c=\"two\\nlines\",d=\"a,b\"} 1\n");
        Sample s = page.samples("m").getFirst();
        assertThat(s.label("a")).isEqualTo("say \"hi\"");
        assertThat(s.label("b")).isEqualTo("back\\slash");
        assertThat(s.label("c")).isEqualTo("two\nlines");
        assertThat(s.label("d")).isEqualTo("a,b");
    }

    @Test
    void readsSpecialValuesAndTimestamps() throws Exception {
        MetricsPage page = parser.parse("""
                a NaN
                b +Inf
                c -Inf
                d 1.5e+09 1700000000123
                e{x="y"} -2 -5
                """ + "f 7\t\n");
        assertThat(page.samples("a").getFirst().value()).isNaN();
        assertThat(page.samples("b").getFirst().value()).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(page.samples("c").getFirst().value()).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(page.samples("d").getFirst().value()).isEqualTo(1.5e9);
        assertThat(page.samples("d").getFirst().timestampMs()).isEqualTo(1700000000123L);
        assertThat(page.samples("e").getFirst().timestampMs()).isEqualTo(-5L);
        assertThat(page.samples("f").getFirst().value()).isEqualTo(7.0);
    }

    @Test
    void skipsCommentsBlankLinesAndCarriageReturns() throws Exception {
        MetricsPage page =
                parser.parse("# just a comment\r\n\r\n   \n#\n# HELP x escaped \\\\ and \\n help\nx 1\r\n# EOF\n");
        assertThat(page.samples("x")).hasSize(1);
        assertThat(page.helps().get("x")).isEqualTo("escaped \\ and \n help");
    }

    @Test
    void acceptsEmptyLabelSetsTrailingCommasAndBlanksInside() throws Exception {
        MetricsPage page = parser.parse("a{} 1\nb{ x = \"1\" , } 2\n");
        assertThat(page.samples("a").getFirst().labels()).isEmpty();
        assertThat(page.samples("b").getFirst().label("x")).isEqualTo("1");
    }

    @Test
    void keepsOnlyWantedSamplesButChecksEveryLine() throws Exception {
        PrometheusTextParser onlyA = new PrometheusTextParser("a"::equals);
        MetricsPage page = onlyA.parse("a 1\nb{x=\"2\"} 2\n");
        assertThat(page.samplesByName()).containsOnlyKeys("a");
        assertThatThrownBy(() -> onlyA.parse("a 1\nb{x=\"2} 2\n"))
                .isInstanceOf(MalformedPageException.class)
                .hasMessageContaining("line 2");
    }

    @Test
    void emptyPageHasNoSamples() throws Exception {
        assertThat(parser.parse("").samplesByName()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "metric", // no value
                "metric{a=\"1\"}", // no value after labels
                "metric abc", // not a number
                "metric 1d", // Java-only float suffix
                "metric Infinity", // Java-only spelling
                "metric 1 2 3", // trailing garbage
                "metric 1 12.5", // fractional timestamp
                "metric{a=\"1\" 1", // unclosed label set
                "metric{a=\"1} 1", // unterminated value
                "metric{a=1} 1", // unquoted value
                "metric{a=\"\\t\"} 1", // invalid escape
                "metric{a=\"1\",a=\"2\"} 1", // duplicate label
                "metric{1a=\"1\"} 1", // bad label name
                "metric{a=\"1\"b=\"2\"} 1", // missing comma
                "1metric 1", // bad metric name
                "{a=\"1\"} 1", // no metric name
                "# TYPE metric nonsense", // unknown type
                "# TYPE metric", // missing type
                "# TYPE metric gauge\n# TYPE metric counter", // second TYPE
            })
    void rejectsMalformedLines(String line) {
        assertThatThrownBy(() -> parser.parse("ok 1\n" + line + "\n")).isInstanceOf(MalformedPageException.class);
    }

    @Test
    void acceptsValueRightAfterLabels() throws Exception {
        // Go's reference parser accepts this too: only the metric name/labels end the token.
        assertThat(parser.parse("metric{a=\"1\"}1\n")
                        .samples("metric")
                        .getFirst()
                        .value())
                .isEqualTo(1.0);
    }
}
