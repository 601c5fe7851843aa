package dev.patchbay.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.StepStats;
import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The rendered page passes {@code promtool check metrics}. promtool (2.42, Debian's {@code prometheus} package)
 * exits 1 on a parse error and 3 on lint problems. Two lint rules contradict vLLM's names, which dashboards and
 * routers depend on, and are accepted: colons in names ({@code vllm:*}) and the {@code _total} suffix of the
 * histogram {@code vllm:iteration_tokens_total}. Any other problem fails the test.
 */
class PromtoolTest {

    private static final List<Pattern> ACCEPTED_LINT = List.of(
            Pattern.compile("^vllm:\\S+ metric names should not contain ':'$"),
            Pattern.compile("^vllm:iteration_tokens_total non-counter metrics should not have \"_total\" suffix$"));

    private static String promtool() {
        return RequiredTool.onPath("promtool", "Debian package 'prometheus'; scripts/test-prereqs.sh installs it")
                .toString();
    }

    private record Result(int exitCode, String output) {}

    private static Result check(String page) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(promtool(), "check", "metrics")
                .redirectErrorStream(true)
                .start();
        try (OutputStream in = process.getOutputStream()) {
            in.write(page.getBytes(StandardCharsets.UTF_8));
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("promtool finished")
                .isTrue();
        return new Result(process.exitValue(), output);
    }

    private static void assertPasses(String page) throws IOException, InterruptedException {
        Result result = check(page);
        assertThat(result.exitCode()).as(result.output()).isIn(0, 3);
        List<String> problems = new ArrayList<>();
        for (String line : result.output().split("\n")) {
            if (line.isBlank()) continue;
            if (ACCEPTED_LINT.stream().noneMatch(p -> p.matcher(line).matches())) problems.add(line);
        }
        assertThat(problems).isEmpty();
    }

    private static EngineSnapshot busySnapshot() {
        Fixtures.Snap snap = new Fixtures.Snap()
                .running(9)
                .waiting(4)
                .step(Fixtures.step(
                        300,
                        3,
                        List.of(new StepStats.FirstToken("adapter-1", 0.2)),
                        List.of(0.03),
                        List.of(Fixtures.finished("adapter-1", 1.5), Fixtures.finished(null, 0.9)),
                        List.of(new AdapterLoad("adapter-2", AdapterLoad.Source.DISK, 0.4))));
        for (int i = 0; i < 30; i++) {
            Level level = i < 4 ? Level.GPU : i < 20 ? Level.CPU : Level.NONE;
            snap.adapter(Fixtures.adapter("adapter-" + i, level == Level.GPU ? 2 : 0, i % 3, level));
        }
        snap.adapter(Fixtures.adapter("odd \"name\" \\ with\nnewline", 0, 1, Level.NONE));
        return snap.build();
    }

    @Test
    void pagePassesPromtool() throws Exception {
        EngineSnapshot snapshot = busySnapshot();
        EngineMetrics metrics = new EngineMetrics(
                Fixtures.options(true).withEnableLoraLatencyMetrics(true).withMaxLoraMetricSeries(25), () -> snapshot);
        metrics.accept(snapshot);
        String page = metrics.scrape().text();
        assertThat(page).contains("lora_name=\"__other__\"");
        assertPasses(page);
        assertPasses(metrics.scrapeWithLibrary(Set.of(), null).text());
    }

    @Test
    void pageWithoutLoraPassesPromtool() throws Exception {
        EngineSnapshot snapshot = new Fixtures.Snap().lora(false).build();
        assertPasses(new EngineMetrics(Fixtures.options(false), () -> snapshot)
                .scrape()
                .text());
    }

    @Test
    void promtoolRejectsABrokenPage() throws Exception {
        // the check above is only worth something if promtool does reject
        Result result = check("vllm:num_requests_running{engine=\"0\" 1.0\n");
        assertThat(result.exitCode()).isEqualTo(1);
    }
}
