package dev.patchbay.router.pick;

import java.util.List;

/** (maxQ - Q) / (maxQ - minQ) over the candidates' waiting queues; 1 when all are equal. */
public final class QueueScorer implements Scorer {
    public static final String NAME = "queue";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        int min = Integer.MAX_VALUE;
        int max = Integer.MIN_VALUE;
        for (EndpointState state : candidates) {
            min = Math.min(min, state.metrics().waitingRequests());
            max = Math.max(max, state.metrics().waitingRequests());
        }
        double[] scores = new double[candidates.size()];
        for (int i = 0; i < scores.length; i++) {
            scores[i] = max == min ? 1.0
                    : (double) (max - candidates.get(i).metrics().waitingRequests()) / (max - min);
        }
        return scores;
    }
}
