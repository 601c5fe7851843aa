package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.scrape.MetricFamilies;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Fetches an endpoint's metrics page over HTTP, bounded by a time-out for the whole exchange. */
public final class MetricsFetcher {
    /** The metrics endpoint answered with a status other than 200. */
    public static final class BadStatusException extends IOException {
        BadStatusException(int status) {
            super("metrics answered HTTP " + status);
        }
    }

    /** The page did not come within the time-out. */
    public static final class TimedOutException extends IOException {
        TimedOutException(Duration timeout) {
            super("metrics took longer than " + timeout.toMillis() + " ms");
        }
    }

    private final HttpClient client;
    private final Duration timeout;

    public MetricsFetcher(HttpClient client, Duration timeout) {
        this.client = client;
        this.timeout = timeout;
    }

    public String fetch(Endpoint endpoint) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://" + endpoint.address() + "/metrics?" + MetricFamilies.QUERY))
                .header("Accept", "text/plain;version=0.0.4")
                .timeout(timeout)
                .GET()
                .build();
        CompletableFuture<HttpResponse<String>> exchange =
                client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        try {
            HttpResponse<String> response = exchange.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (response.statusCode() != 200) {
                throw new BadStatusException(response.statusCode());
            }
            return response.body();
        } catch (TimeoutException e) {
            exchange.cancel(true);
            throw new TimedOutException(timeout);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw cause instanceof IOException io ? io : new IOException(String.valueOf(cause), cause);
        } catch (InterruptedException e) {
            exchange.cancel(true);
            throw e;
        }
    }
}
