package dev.patchbay.launcher.placement;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The router's own account of placement, {@code GET /admin/placement}: what it wants where, and what it has done. */
final class PlacementView {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http = HttpClient.newHttpClient();
    private final URI uri;

    PlacementView(URI router) {
        this.uri = router.resolve("/admin/placement");
    }

    JsonNode read() throws IOException, InterruptedException {
        HttpResponse<String> answer = http.send(
                HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IOException(uri + " answered " + answer.statusCode());
        }
        return JSON.readTree(answer.body());
    }

    /** Loads ({@code "loads"}) or unloads ({@code "unloads"}) started so far. */
    static long started(JsonNode view, String kind) {
        return view.path(kind).path("started").asLong();
    }

    static long failed(JsonNode view, String kind) {
        return view.path(kind).path("failed").asLong();
    }

    /** Whether {@code adapter} has at least {@code homes} desired homes and every one of them holds it. */
    static boolean placed(JsonNode view, String adapter, int homes) {
        for (JsonNode a : view.path("adapters")) {
            if (!a.path("adapter").asText().equals(adapter)) {
                continue;
            }
            if (a.path("desired").size() < homes) {
                return false;
            }
            List<String> actual = new ArrayList<>();
            a.path("actual").forEach(n -> actual.add(n.asText()));
            for (JsonNode home : a.path("desired")) {
                if (!actual.contains(home.asText())) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    /**
     * Polls every {@code every} from now until {@code adapter} is placed on {@code homes} servers or {@code limit}
     * passes, and returns the seconds it took, or null if it was not placed within the limit.
     */
    Double follow(String adapter, int homes, Duration every, Duration limit) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + limit.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (placed(read(), adapter, homes)) {
                    return (System.nanoTime() - start) / 1e9;
                }
            } catch (IOException e) {
                // A missed poll is only a later answer: the next one decides.
            }
            Thread.sleep(every); // the polling period itself, bounded by the limit
        }
        return null;
    }
}
