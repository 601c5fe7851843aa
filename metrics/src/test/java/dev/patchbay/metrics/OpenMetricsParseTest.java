package dev.patchbay.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.stats.AdapterLoad;
import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.engine.stats.StepStats;
import dev.patchbay.testkit.RequiredTool;
import java.io.File;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The OpenMetrics page passes a strict OpenMetrics parser: Python prometheus_client's (Debian
 * {@code python3-prometheus-client}), which rejects what the format forbids (interleaved families, bad suffixes,
 * missing {@code # EOF}). Skipped where that parser is not installed, and failed so under CI.
 */
class OpenMetricsParseTest {

    private static final String PARSE = """
            import sys
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
            families = list(text_string_to_metric_families(sys.stdin.read()))
            print(len(families), sum(len(f.samples) for f in families))
            """;

    private static String python() throws Exception {
        for (String candidate : List.of("/usr/bin/python3", "python3")) {
            File file = new File(candidate);
            if (candidate.startsWith("/") && !file.canExecute()) continue;
            Process p = new ProcessBuilder(candidate, "-c", "import prometheus_client.openmetrics.parser")
                    .redirectErrorStream(true)
                    .start();
            p.getInputStream().readAllBytes();
            if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) return candidate;
        }
        throw RequiredTool.missing(
                "python3 with prometheus_client is not installed (Debian package " + "'python3-prometheus-client')");
    }

    @Test
    void openMetricsPageParses() throws Exception {
        String python = python();
        EngineSnapshot s = new Fixtures.Snap()
                .running(3)
                .waiting(2)
                .adapter(Fixtures.adapter("alpha", 2, 1, Level.GPU))
                .adapter(Fixtures.adapter("beta", 0, 1, Level.NONE))
                .adapter(Fixtures.adapter("gamma", 0, 0, Level.CPU))
                .step(Fixtures.step(
                        64,
                        2,
                        List.of(new StepStats.FirstToken("alpha", 0.05)),
                        List.of(0.02),
                        List.of(Fixtures.finished("alpha", 1.2)),
                        List.of(new AdapterLoad("alpha", AdapterLoad.Source.DISK, 0.3))))
                .build();
        EngineMetrics metrics = new EngineMetrics(
                Fixtures.options(true).withEnableLoraLatencyMetrics(true).withMaxLoraMetricSeries(2), () -> s);
        metrics.accept(s);
        String page = metrics.scrape(Set.of(), "application/openmetrics-text; version=1.0.0; charset=utf-8")
                .text();

        Process p = new ProcessBuilder(python, "-c", PARSE)
                .redirectErrorStream(true)
                .start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(page.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        long families = Page.parse(metrics.scrape().text()).types().size();
        assertThat(out.trim().split(" ")[0]).isEqualTo(Long.toString(families));
    }
}
