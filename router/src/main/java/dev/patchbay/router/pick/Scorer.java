package dev.patchbay.router.pick;

import java.util.List;

/** Scores every candidate in [0, 1]; higher is better. Scores may depend on the whole set. */
public interface Scorer {
    String name();

    /** One score per candidate, in the candidates' order. */
    double[] score(PickRequest request, List<EndpointState> candidates);
}
