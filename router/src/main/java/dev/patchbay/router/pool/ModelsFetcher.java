package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;

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
        return ServedModels.parse(BoundedGet.body(
                client,
                URI.create("http://" + endpoint.address() + "/v1/models"),
                "application/json",
                timeout,
                "/v1/models"));
    }
}
