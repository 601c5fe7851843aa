package dev.patchbay.router.pool;

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

/** One GET of an endpoint's page whose whole exchange, not only its connection, is bounded by a time-out. */
final class BoundedGet {
    private BoundedGet() {}

    /**
     * The body of a 200 answer; {@link MetricsFetcher.TimedOutException} when the answer is not whole within
     * {@code timeout}, {@link MetricsFetcher.BadStatusException} on another status, another IOException when the
     * exchange fails. {@code what} names the page in those messages.
     */
    static String body(HttpClient client, URI uri, String accept, Duration timeout, String what)
            throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri)
                .header("Accept", accept)
                .timeout(timeout)
                .GET()
                .build();
        CompletableFuture<HttpResponse<String>> exchange =
                client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> response;
        try {
            response = exchange.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            exchange.cancel(true);
            throw new MetricsFetcher.TimedOutException(what, timeout);
        } catch (ExecutionException e) {
            // The request's own timeout and the wait above end at the same moment: either may come first.
            Throwable cause = e.getCause();
            if (cause instanceof HttpTimeoutException) {
                throw new MetricsFetcher.TimedOutException(what, timeout);
            }
            throw cause instanceof IOException io ? io : new IOException(String.valueOf(cause), cause);
        } catch (InterruptedException e) {
            exchange.cancel(true);
            throw e;
        }
        if (response.statusCode() != 200) {
            throw new MetricsFetcher.BadStatusException(what, response.statusCode());
        }
        return response.body();
    }
}
