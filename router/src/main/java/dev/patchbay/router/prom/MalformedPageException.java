package dev.patchbay.router.prom;

/** A metrics page that does not follow the Prometheus text format; the scrape counts as failed. */
public final class MalformedPageException extends Exception {
    public MalformedPageException(int lineNumber, String problem) {
        super("line " + lineNumber + ": " + problem);
    }
}
