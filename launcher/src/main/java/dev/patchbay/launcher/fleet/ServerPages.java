package dev.patchbay.launcher.fleet;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.prom.MalformedPageException;
import dev.patchbay.router.prom.MetricsPage;
import dev.patchbay.router.prom.PrometheusTextParser;
import dev.patchbay.router.prom.Sample;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What the model servers themselves say, read from their Prometheus pages: the kit judges where requests went by the
 * servers' own counters, never by the picker's word.
 */
public final class ServerPages {
    private static final PrometheusTextParser PARSER = new PrometheusTextParser();

    private final HttpClient http;
    private final List<Endpoint> servers;

    public ServerPages(HttpClient http, List<Endpoint> servers) {
        this.http = http;
        this.servers = List.copyOf(servers);
    }

    public List<Endpoint> servers() {
        return servers;
    }

    /** Every server's page, each read once, so that counters taken together come from the same moment. */
    public Snapshot read() throws IOException, InterruptedException {
        List<MetricsPage> pages = new ArrayList<>(servers.size());
        for (Endpoint server : servers) {
            pages.add(page(server));
        }
        return new Snapshot(pages);
    }

    private MetricsPage page(Endpoint server) throws IOException, InterruptedException {
        HttpResponse<String> answer = http.send(
                HttpRequest.newBuilder(URI.create("http://" + server.address() + "/metrics"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IOException(server.address() + "/metrics answered " + answer.statusCode());
        }
        try {
            return PARSER.parse(answer.body());
        } catch (MalformedPageException e) {
            throw new IOException(server.address() + "/metrics: " + e.getMessage(), e);
        }
    }

    /** The servers' pages at one moment. */
    public record Snapshot(List<MetricsPage> pages) {
        /** Over every server, the sum of {@code sample}'s values. */
        public double total(String sample) {
            return total(sample, null, null);
        }

        /** Over every server, the sum of {@code sample}'s values whose label {@code label} is {@code value}. */
        public double total(String sample, String label, String value) {
            double sum = 0;
            for (MetricsPage page : pages) {
                for (Sample s : page.samples(sample)) {
                    if (label == null || value.equals(s.label(label))) {
                        sum += s.value();
                    }
                }
            }
            return sum;
        }

        /** Per server, in the servers' order, the sum of {@code sample}'s values. */
        public List<Double> perServer(String sample) {
            List<Double> sums = new ArrayList<>(pages.size());
            for (MetricsPage page : pages) {
                sums.add(new Snapshot(List.of(page)).total(sample));
            }
            return sums;
        }

        /** Whether every server's page has samples of {@code sample}. */
        public boolean allHave(String sample) {
            return pages.stream().allMatch(page -> !page.samples(sample).isEmpty());
        }
    }
}
