package dev.patchbay.router.pick;

import java.util.List;

/** Narrows the candidates before scoring; never returns an empty list for a non-empty input. */
public interface Filter {
    String name();

    List<EndpointState> filter(PickRequest request, List<EndpointState> candidates);
}
