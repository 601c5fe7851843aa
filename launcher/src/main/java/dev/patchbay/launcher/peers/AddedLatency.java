package dev.patchbay.launcher.peers;

import dev.patchbay.bench.sim.Percentiles;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * What a front adds to a request's time to first token: on an idle fleet, one streamed request at a time, alternately
 * straight to a model server and through the front, each timed from send to the first event of the answer. The added
 * time at a percentile is the front's time there less the direct time there.
 *
 * @param directP50 direct time to first token at the median, seconds
 * @param directP99 and at the 99th percentile
 * @param frontP50  through the front, median
 * @param frontP99  through the front, 99th percentile
 * @param samples   requests timed on each path
 */
public record AddedLatency(double directP50, double directP99, double frontP50, double frontP99, int samples) {
    public double addedP50() {
        return frontP50 - directP50;
    }

    public double addedP99() {
        return frontP99 - directP99;
    }

    /**
     * Times {@code samples} requests on each path, after {@code warmUp} on each that are not counted.
     *
     * @param direct one model server's base URL
     * @param front  the front's base URL
     */
    public static AddedLatency measure(URI direct, URI front, String model, int warmUp, int samples)
            throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        for (int i = 0; i < warmUp; i++) {
            firstEventSeconds(http, direct, model);
            firstEventSeconds(http, front, model);
        }
        double[] directTimes = new double[samples];
        double[] frontTimes = new double[samples];
        for (int i = 0; i < samples; i++) {
            directTimes[i] = firstEventSeconds(http, direct, model);
            frontTimes[i] = firstEventSeconds(http, front, model);
        }
        Arrays.sort(directTimes);
        Arrays.sort(frontTimes);
        return new AddedLatency(
                Percentiles.nearestRank(directTimes, 50),
                Percentiles.nearestRank(directTimes, 99),
                Percentiles.nearestRank(frontTimes, 50),
                Percentiles.nearestRank(frontTimes, 99),
                samples);
    }

    /** Seconds from sending a streamed completion to reading its first {@code data:} line. */
    static double firstEventSeconds(HttpClient http, URI base, String model) throws IOException, InterruptedException {
        String body = "{\"model\":\"" + model + "\",\"prompt\":\"time me\",\"max_tokens\":1,\"stream\":true}";
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/v1/completions"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        long start = System.nanoTime();
        HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            if (response.statusCode() != 200) {
                throw new IOException(base + " answered " + response.statusCode() + " to a timed request");
            }
            for (String line; (line = lines.readLine()) != null; ) {
                if (line.startsWith("data:")) {
                    double seconds = (System.nanoTime() - start) / 1e9;
                    lines.transferTo(Writer.nullWriter());
                    return seconds;
                }
            }
        }
        throw new IOException(base + " answered a timed request without an event");
    }
}
