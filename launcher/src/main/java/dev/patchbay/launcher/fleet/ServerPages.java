package dev.patchbay.launcher.fleet;

import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/**
 * What the model servers themselves say, read from their Prometheus pages: the kit judges where requests went by the
 * servers' own counters, never by the picker's word.
 */
public final class ServerPages {
    private final HttpClient http;
    private final List<Endpoint> servers;

    public ServerPages(HttpClient http, List<Endpoint> servers) {
        this.http = http;
        this.servers = List.copyOf(servers);
    }

    public List<Endpoint> servers() {
        return servers;
    }

    /** One server's page. */
    public String page(Endpoint server) throws IOException, InterruptedException {
        HttpResponse<String> answer = http.send(
                HttpRequest.newBuilder(URI.create("http://" + server.address() + "/metrics"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IOException(server.address() + "/metrics answered " + answer.statusCode());
        }
        return answer.body();
    }

    /** Over every server, the sum of {@code family}'s samples whose labels contain {@code label} (any when empty). */
    public double total(String family, String label) throws IOException, InterruptedException {
        double sum = 0;
        for (Endpoint server : servers) {
            sum += sum(page(server), family, label);
        }
        return sum;
    }

    /** Whether every server's page has {@code family}. */
    public boolean allHave(String family) throws IOException, InterruptedException {
        for (Endpoint server : servers) {
            if (page(server).lines().noneMatch(line -> isSample(line, family))) {
                return false;
            }
        }
        return true;
    }

    public static double sum(String page, String family, String label) {
        double sum = 0;
        for (String line : page.lines().toList()) {
            if (isSample(line, family) && line.contains(label)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    private static boolean isSample(String line, String family) {
        return line.startsWith(family + "{") || line.startsWith(family + " ");
    }
}
