package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Fetches an endpoint's {@code /v1/models} over HTTP, bounded by a time-out for the whole exchange. */
public final class ModelsFetcher {
    private final HttpClient client;
    private final Duration timeout;

    public ModelsFetcher(HttpClient client, Duration timeout) {
        this.client = client;
        this.timeout = timeout;
    }

    /** The endpoint's model list; IOException when it does not answer one in time. */
    public ServedModels fetch(Endpoint endpoint) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + endpoint.address() + "/v1/models"))
                .header("Accept", "application/json")
                .timeout(timeout)
                .GET()
                .build();
        CompletableFuture<HttpResponse<String>> exchange = client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> response;
        try {
            response = exchange.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            exchange.cancel(true);
            throw tookTooLong();
        } catch (ExecutionException e) {
            // The request's own timeout and the wait above end at the same moment: either may come first.
            Throwable cause = e.getCause();
            if (cause instanceof HttpTimeoutException) {
                throw tookTooLong();
            }
            throw cause instanceof IOException io ? io : new IOException(String.valueOf(cause), cause);
        } catch (InterruptedException e) {
            exchange.cancel(true);
            throw e;
        }
        if (response.statusCode() != 200) {
            throw new IOException("/v1/models answered HTTP " + response.statusCode());
        }
        return ServedModels.parse(response.body());
    }

    private IOException tookTooLong() {
        return new IOException("/v1/models took longer than " + timeout.toMillis() + " ms");
    }
}
