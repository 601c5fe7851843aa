package dev.patchbay.router.pick;

import java.util.List;

/** A request about to go out, as {@link PreRequest} plugins see it. */
public interface Dispatch {
    PickRequest request();

    /** The endpoints its pick chose among, after the subset hint and before the profile's filters. */
    List<EndpointState> candidates();

    /** Where it goes. */
    EndpointState target();

    /**
     * From now until a scrape of the target shows the request, it counts in the target's metrics (waiting until its
     * answer begins, then running), so that the picks between two scrapes see it.
     */
    void countUntilShown();
}
