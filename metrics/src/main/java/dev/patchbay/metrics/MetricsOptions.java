package dev.patchbay.metrics;

import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.PatchbayVersion;
import java.util.Objects;

/**
 * What the metrics need besides the snapshots: labels, version, limits, and the settings that decide which families
 * exist. Values that describe the running engine (cache and LoRA configuration in the info gauges) come from the
 * snapshots, which carry the effective ones (for example {@code lora_dtype} with {@code auto} resolved).
 *
 * @param servedModelName             value of the {@code model_name} label
 * @param engine                      value of the {@code engine} label (the data-parallel engine index)
 * @param patchbayVersion             the running version, for the deprecation lifecycle
 * @param showHiddenMetricsForVersion {@code --show-hidden-metrics-for-version} ({@code X.Y}), null when not given
 * @param maxLoraMetricSeries         adapters with their own per-adapter series at most
 *                                    ({@code --max-lora-metric-series})
 * @param enableLoraLatencyMetrics    per-adapter latency histograms ({@code --enable-lora-latency-metrics})
 * @param maxModelLen                 upper end of the 1-2-5 token histograms
 * @param enableLora                  the LoRA histograms exist ({@code --enable-lora}); the other LoRA families
 *                                    follow {@code snapshot.lora() != null}
 */
public record MetricsOptions(
        String servedModelName,
        String engine,
        String patchbayVersion,
        String showHiddenMetricsForVersion,
        int maxLoraMetricSeries,
        boolean enableLoraLatencyMetrics,
        int maxModelLen,
        boolean enableLora) {

    public static final String DEFAULT_VERSION = PatchbayVersion.VERSION;
    public static final int DEFAULT_MAX_LORA_METRIC_SERIES = 1000;

    public MetricsOptions {
        Objects.requireNonNull(servedModelName, "servedModelName");
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(patchbayVersion, "patchbayVersion");
        Version.parse(patchbayVersion);
        if (showHiddenMetricsForVersion != null) Version.parse(showHiddenMetricsForVersion);
        if (maxLoraMetricSeries < 1) {
            throw new IllegalArgumentException("max_lora_metric_series must be >= 1, got " + maxLoraMetricSeries);
        }
        if (maxModelLen < 1) throw new IllegalArgumentException("max_model_len must be >= 1, got " + maxModelLen);
    }

    /** The engine's settings with Patchbay's defaults for the metric-only options. */
    public static MetricsOptions of(EngineConfig config) {
        return new MetricsOptions(
                config.servedModelName(),
                "0",
                DEFAULT_VERSION,
                null,
                DEFAULT_MAX_LORA_METRIC_SERIES,
                false,
                config.maxModelLen(),
                config.enableLora());
    }

    public MetricsOptions withPatchbayVersion(String version) {
        return new MetricsOptions(
                servedModelName,
                engine,
                version,
                showHiddenMetricsForVersion,
                maxLoraMetricSeries,
                enableLoraLatencyMetrics,
                maxModelLen,
                enableLora);
    }

    /** @param version {@code X.Y} (or {@code X.Y.Z}); null for none */
    public MetricsOptions withShowHiddenMetricsForVersion(String version) {
        return new MetricsOptions(
                servedModelName,
                engine,
                patchbayVersion,
                version,
                maxLoraMetricSeries,
                enableLoraLatencyMetrics,
                maxModelLen,
                enableLora);
    }

    public MetricsOptions withMaxLoraMetricSeries(int max) {
        return new MetricsOptions(
                servedModelName,
                engine,
                patchbayVersion,
                showHiddenMetricsForVersion,
                max,
                enableLoraLatencyMetrics,
                maxModelLen,
                enableLora);
    }

    public MetricsOptions withEnableLoraLatencyMetrics(boolean enable) {
        return new MetricsOptions(
                servedModelName,
                engine,
                patchbayVersion,
                showHiddenMetricsForVersion,
                maxLoraMetricSeries,
                enable,
                maxModelLen,
                enableLora);
    }

    public MetricsOptions withEngine(String engineLabel) {
        return new MetricsOptions(
                servedModelName,
                engineLabel,
                patchbayVersion,
                showHiddenMetricsForVersion,
                maxLoraMetricSeries,
                enableLoraLatencyMetrics,
                maxModelLen,
                enableLora);
    }
}
