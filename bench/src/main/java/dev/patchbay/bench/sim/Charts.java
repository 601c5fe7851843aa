package dev.patchbay.bench.sim;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** PNG charts of one workload's sweep: a metric against request rate, one line per policy. */
public final class Charts {
    private Charts() {}

    public static void ttftP99(Path file, String workload, List<RunResult> results) throws IOException {
        XYChart chart = chart(
                "TTFT p99 against request rate (" + workload + ")",
                "TTFT p99 (s, log scale)",
                results,
                RunResult::ttftP99,
                true);
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    public static void loadsFromStorage(Path file, String workload, List<RunResult> results) throws IOException {
        XYChart chart = chart(
                "Adapter loads from storage against request rate (" + workload + ")",
                "loads from storage, all replicas (log scale)",
                results,
                r -> r.loadsFromStorage(),
                true);
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /**
     * Lines of {@code y} against {@code x}, one per name, on a log y axis (points at or below zero are left out).
     * Each value of {@code lines} holds the x values and the y values.
     */
    public static void lines(Path file, String title, String xTitle, String yTitle, Map<String, double[][]> lines)
            throws IOException {
        XYChart chart = new XYChartBuilder()
                .width(1000)
                .height(560)
                .title(title)
                .xAxisTitle(xTitle)
                .yAxisTitle(yTitle)
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setYAxisLogarithmic(true);
        for (var e : lines.entrySet()) {
            List<Double> xs = new ArrayList<>(), ys = new ArrayList<>();
            for (int i = 0; i < e.getValue()[0].length; i++) {
                double v = e.getValue()[1][i];
                if (Double.isFinite(v) && v > 0) {
                    xs.add(e.getValue()[0][i]);
                    ys.add(v);
                }
            }
            if (xs.isEmpty()) continue;
            chart.addSeries(e.getKey(), xs, ys).setMarker(SeriesMarkers.CIRCLE);
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private static XYChart chart(
            String title, String yTitle, List<RunResult> results, ToDoubleFunction<RunResult> y, boolean logY) {
        XYChart chart = new XYChartBuilder()
                .width(1000)
                .height(560)
                .title(title)
                .xAxisTitle("request rate (req/s)")
                .yAxisTitle(yTitle)
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setYAxisLogarithmic(logY);
        Map<String, List<RunResult>> byPolicy = new LinkedHashMap<>();
        for (RunResult r : results)
            byPolicy.computeIfAbsent(r.policy(), k -> new ArrayList<>()).add(r);
        for (var e : byPolicy.entrySet()) {
            List<Double> xs = new ArrayList<>(), ys = new ArrayList<>();
            for (RunResult r : e.getValue()) {
                double v = y.applyAsDouble(r);
                // A log axis cannot show zero; such points are left out of the line.
                if (Double.isFinite(v) && (v > 0 || !logY)) {
                    xs.add(r.rate());
                    ys.add(v);
                }
            }
            if (xs.isEmpty()) continue;
            XYSeries s = chart.addSeries(e.getKey(), xs, ys);
            s.setMarker(SeriesMarkers.CIRCLE);
        }
        return chart;
    }
}
