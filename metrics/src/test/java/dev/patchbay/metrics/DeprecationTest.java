package dev.patchbay.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.EngineSnapshot;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** vLLM's lifecycle: deprecated in X.Y, hidden in X.Y+1 unless asked for, removed in X.Y+2. */
class DeprecationTest {

    private final Deprecation deprecation = new Deprecation("0.1", "vllm:new_metric");

    @Test
    void lifecycle() {
        assertThat(deprecation.status("0.1.0", null)).isEqualTo(Deprecation.Status.SHOWN);
        assertThat(deprecation.status("0.1.7", null)).isEqualTo(Deprecation.Status.SHOWN);
        assertThat(deprecation.status("0.2.0", null)).isEqualTo(Deprecation.Status.HIDDEN);
        assertThat(deprecation.status("0.2.0", "0.1")).isEqualTo(Deprecation.Status.SHOWN);
        assertThat(deprecation.status("0.2.3", "0.0")).isEqualTo(Deprecation.Status.HIDDEN);
        assertThat(deprecation.status("0.2.3", "0.1.0")).isEqualTo(Deprecation.Status.SHOWN);
        assertThat(deprecation.status("0.3.0", "0.1")).isEqualTo(Deprecation.Status.REMOVED);
        assertThat(deprecation.status("0.3.0", null)).isEqualTo(Deprecation.Status.REMOVED);
        assertThat(deprecation.status("1.0.0", "0.1")).isEqualTo(Deprecation.Status.REMOVED);
        assertThat(deprecation.help("Old thing.")).isEqualTo("Old thing. DEPRECATED: use vllm:new_metric instead.");
    }

    @Test
    void versionsMustBeMajorDotMinor() {
        assertThatThrownBy(() -> new Deprecation("one", "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Fixtures.options(true).withPatchbayVersion("7"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Fixtures.options(true).withShowHiddenMetricsForVersion("latest"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static Page page(MetricsOptions options) {
        EngineSnapshot s = new Fixtures.Snap()
                .adapter(Fixtures.adapter("alpha", 1, 0, AdapterState.Level.GPU))
                .build();
        return Page.parse(new EngineMetrics(options, () -> s).scrape().text());
    }

    @Test
    void legacyGaugeIsDeprecatedInZeroOne() {
        Page page = page(Fixtures.options(true));
        assertThat(page.helps().get("vllm:lora_requests_info"))
                .endsWith("DEPRECATED: use vllm:num_lora_requests_running and vllm:lora_adapter_loaded instead.");
        assertThat(page.samples("vllm:lora_requests_info")).hasSize(1);
    }

    @Test
    void legacyGaugeIsHiddenInZeroTwoUnlessShowHiddenNamesZeroOne() {
        assertThat(page(Fixtures.options(true).withPatchbayVersion("0.2.0")).types())
                .doesNotContainKey("vllm:lora_requests_info")
                .containsKey("vllm:num_lora_requests_running");
        assertThat(page(Fixtures.options(true).withPatchbayVersion("0.2.0").withShowHiddenMetricsForVersion("0.1"))
                        .samples("vllm:lora_requests_info"))
                .hasSize(1);
    }

    @Test
    void legacyGaugeIsRemovedInZeroThree() {
        MetricsOptions options =
                Fixtures.options(true).withPatchbayVersion("0.3.0").withShowHiddenMetricsForVersion("0.1");
        assertThat(page(options).types()).doesNotContainKey("vllm:lora_requests_info");
        EngineSnapshot s = new Fixtures.Snap().build();
        EngineMetrics metrics = new EngineMetrics(options, () -> s);
        assertThat(metrics.scrape(Set.of("vllm:lora_requests_info"), null).body())
                .isEmpty();
    }
}
