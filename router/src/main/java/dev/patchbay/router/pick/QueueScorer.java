package dev.patchbay.router.pick;

import java.util.List;

/**
 * 1 - (Q - minQ) / max(maxQ - minQ, minSpread) over the candidates' waiting queues; 1 when all are equal.
 *
 * <p>With {@code minSpread} 0 this is the gateway's min-max queue scorer, where one waiting request against none
 * spans the whole range and outweighs most of the other scorers. A larger {@code minSpread} keeps small
 * differences small: a router that counts its own picks (each adds one to a queue until the next scrape) needs that,
 * or it would move an adapter to a new endpoint over a single request.
 */
public final class QueueScorer implements Scorer {
    public static final String NAME = "queue";

    private final int minSpread;

    public QueueScorer(int minSpread) {
        if (minSpread < 0) {
            throw new IllegalArgumentException("minSpread must be >= 0, got " + minSpread);
        }
        this.minSpread = minSpread;
    }

    public QueueScorer() {
        this(0);
    }

    public int minSpread() {
        return minSpread;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        long[] waiting = new long[candidates.size()];
        for (int i = 0; i < waiting.length; i++) {
            waiting[i] = candidates.get(i).metrics().waitingRequests();
        }
        return SpreadScores.lowerIsBetter(waiting, minSpread);
    }
}
