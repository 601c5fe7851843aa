package dev.patchbay.router.proxy;

import dev.patchbay.router.Router;
import dev.patchbay.router.RouterOptions;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointSource;
import dev.patchbay.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

/** Starts a router in front of fake servers and sends it requests. */
final class RouterHarness implements AutoCloseable {
    final Router router;
    final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();

    RouterHarness(RouterConfig config, Duration interval, Duration staleness, List<String> addresses) {
        this(config, interval, staleness, RouterOptions.defaultMaxStaleness(staleness), addresses);
    }

    RouterHarness(
            RouterConfig config, Duration interval, Duration staleness, Duration maxStaleness, List<String> addresses) {
        List<Endpoint> endpoints = addresses.stream().map(Endpoint::parse).toList();
        router = new Router(RouterOptions.builder(EndpointSource.of(endpoints))
                        .config(config)
                        .scrapeInterval(interval)
                        .staleness(staleness)
                        .maxStaleness(maxStaleness)
                        .build())
                .start();
    }

    int port() {
        return router.port();
    }

    static RouterHarness over(RouterConfig config, FakeModelServer... servers) {
        return new RouterHarness(
                config,
                Duration.ofMillis(25),
                Duration.ofMillis(500),
                Arrays.stream(servers).map(FakeModelServer::address).toList());
    }

    void awaitReady(int count) {
        await("ready endpoints = " + count, () -> router.pool().readyStates().size() == count);
    }

    static void await(String what, BooleanSupplier condition) {
        Await.until(what, condition);
    }

    HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + router.port() + path))
                .timeout(Duration.ofSeconds(10));
    }

    HttpResponse<String> complete(String model) throws IOException, InterruptedException {
        return post("/v1/completions", "{\"model\":\"" + model + "\",\"prompt\":\"hi\",\"max_tokens\":4}");
    }

    HttpResponse<String> post(String path, String body, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder builder = request(path)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (headers.length > 0) {
            builder.headers(headers);
        }
        return client.send(builder.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return client.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        router.stop();
        client.shutdownNow();
    }
}
