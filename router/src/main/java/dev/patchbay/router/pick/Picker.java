package dev.patchbay.router.pick;

import java.util.List;

/** Orders the scored candidates, best first; the rest are the fallbacks for a retry. */
public interface Picker {
    String name();

    List<EndpointState> rank(List<EndpointState> candidates, double[] totalScores);
}
