package dev.patchbay.router.pool;

import dev.patchbay.router.prom.MalformedPageException;
import dev.patchbay.router.scrape.UnusablePageException;
import java.io.IOException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.util.Locale;

/**
 * Why a scrape failed; the {@code reason} label of the router's scrape-failure counter. Every reason but
 * {@link #TIMEOUT} takes the endpoint out until its next good scrape: a slow answer says nothing against the data the
 * last good scrape read, which then only ages (a busy host makes every scrape slow at once).
 */
public enum ScrapeFailure {
    /** The connection was refused or reset, its connect timed out, or the name did not resolve. */
    UNREACHABLE,
    /** Connected, but the page did not come within the scrape's time bound. */
    TIMEOUT,
    /** The metrics endpoint answered with a status other than 200. */
    HTTP_STATUS,
    /** The page does not follow the Prometheus text format. */
    MALFORMED,
    /** The page lacks a family the scorers need. */
    MISSING_FAMILY,
    /** A family the scorers need holds NaN, an infinity or a negative value. */
    INVALID_VALUE,
    /** Anything else the metrics source threw. */
    ERROR;

    /** The metric label: the name in lower case. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** True when the endpoint gets no new requests until its next good scrape. */
    public boolean takesOut() {
        return this != TIMEOUT;
    }

    static ScrapeFailure of(Exception e) {
        return switch (e) {
            case UnusablePageException u ->
                u.problem() == UnusablePageException.Problem.MISSING_FAMILY ? MISSING_FAMILY : INVALID_VALUE;
            case MalformedPageException m -> MALFORMED;
            case MetricsFetcher.BadStatusException s -> HTTP_STATUS;
            case HttpConnectTimeoutException c -> UNREACHABLE;
            case HttpTimeoutException t -> TIMEOUT;
            case MetricsFetcher.TimedOutException t -> TIMEOUT;
            case IOException io -> UNREACHABLE;
            default -> ERROR;
        };
    }
}
