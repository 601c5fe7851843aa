package dev.patchbay.router.scrape;

/**
 * A metrics page that parses but says nothing the router can route on: a family the scorers need is missing, or holds
 * a value no server reports (NaN, infinite, negative). The scrape counts as failed, as a malformed page does.
 */
public final class UnusablePageException extends Exception {
    /** What is wrong with the page. */
    public enum Problem {
        MISSING_FAMILY,
        INVALID_VALUE
    }

    private final Problem problem;

    public UnusablePageException(Problem problem, String message) {
        super(message);
        this.problem = problem;
    }

    public Problem problem() {
        return problem;
    }
}
