package dev.patchbay.router.pick;

/**
 * Counts each request the router sends in its endpoint's metrics until the next scrape shows it, so that the picks
 * of a burst between two scrapes do not all land on the endpoint that looked best at the first. A request without a
 * model (the model list) is not counted: it costs a server nothing.
 */
public final class OwnPicksCounter implements PreRequest {
    public static final String NAME = "own-picks-counter";

    @Override
    public void preRequest(Dispatch dispatch) {
        if (!dispatch.request().model().isEmpty()) {
            dispatch.countUntilShown();
        }
    }
}
