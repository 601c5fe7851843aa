package dev.patchbay.router.pick;

import java.util.List;

/**
 * An adapter's rendezvous order over the candidates, as a score: 1 for the first, falling evenly to 0 for the last;
 * every candidate 0 for a base-model request. With a weight small beside the others it only breaks ties, and breaks
 * them alike in every router replica: requests for a cold adapter that replicas route in the same scrape interval
 * land on the same server, where each would otherwise draw its own.
 */
public final class RendezvousScorer implements Scorer {
    public static final String NAME = "rendezvous";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        int n = candidates.size();
        double[] scores = new double[n];
        if (request.baseModel() || n < 2) return scores;
        long[] weights = new long[n];
        for (int i = 0; i < n; i++)
            weights[i] = Rendezvous.weight(request.model(), candidates.get(i).endpoint());
        for (int i = 0; i < n; i++) {
            int above = 0;
            for (int j = 0; j < n; j++) {
                if (weights[j] > weights[i]
                        || weights[j] == weights[i]
                                && candidates
                                                .get(j)
                                                .endpoint()
                                                .address()
                                                .compareTo(candidates
                                                        .get(i)
                                                        .endpoint()
                                                        .address())
                                        < 0) {
                    above++;
                }
            }
            scores[i] = 1.0 - (double) above / (n - 1);
        }
        return scores;
    }
}
