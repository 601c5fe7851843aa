package dev.patchbay.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.sim.SimModel;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A Patchbay server on a loopback port with adapters written into a temp directory, plus an HTTP client. */
final class ServerHarness implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();
    final PatchbayServer server;
    final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    final String base;

    ServerHarness(Path adapterDir, List<String> adapters, String... extraArgs) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--model",
                "sim:test-model",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--demo-adapters",
                "0",
                "--lora-allowed-dirs",
                adapterDir.toString()));
        for (String a : adapters) {
            writeAdapter(adapterDir, a);
            args.add("--lora-modules");
            args.add(a + "=" + adapterDir.resolve(a));
        }
        args.addAll(List.of(extraArgs));
        server = PatchbayServer.start(ServeCommand.parse(args.toArray(String[]::new)));
        base = "http://127.0.0.1:" + server.port();
    }

    static Path writeAdapter(Path dir, String name) throws IOException {
        return PeftWriter.write(
                dir.resolve(name),
                SimModel.DEFAULT_CONFIG,
                "test-model",
                8,
                16,
                List.of("q_proj", "v_proj"),
                name.hashCode());
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(URI.create(base + path))
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String path, String body, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode json(HttpResponse<String> r) throws IOException {
        return JSON.readTree(r.body());
    }

    @Override
    public void close() {
        server.stop();
    }
}
