package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.scrape.MetricFamilies;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;

/** Fetches an endpoint's metrics page over HTTP, bounded by a time-out for the whole exchange. */
public final class MetricsFetcher {
    /** The page answered with a status other than 200. */
    public static final class BadStatusException extends IOException {
        BadStatusException(String what, int status) {
            super(what + " answered HTTP " + status);
        }
    }

    /** The page did not come within the time-out. */
    public static final class TimedOutException extends IOException {
        public TimedOutException(Duration timeout) {
            this("metrics", timeout);
        }

        TimedOutException(String what, Duration timeout) {
            super(what + " took longer than " + timeout.toMillis() + " ms");
        }
    }

    private final HttpClient client;
    private final Duration timeout;

    public MetricsFetcher(HttpClient client, Duration timeout) {
        this.client = client;
        this.timeout = timeout;
    }

    public String fetch(Endpoint endpoint) throws IOException, InterruptedException {
        return BoundedGet.body(
                client,
                URI.create("http://" + endpoint.address() + "/metrics?" + MetricFamilies.QUERY),
                "text/plain;version=0.0.4",
                timeout,
                "metrics");
    }
}
