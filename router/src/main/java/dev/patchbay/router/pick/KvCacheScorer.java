package dev.patchbay.router.pick;

import java.util.List;

/** 1 - KV-cache usage. */
public final class KvCacheScorer implements Scorer {
    public static final String NAME = "kv-cache";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double[] score(PickRequest request, List<EndpointState> candidates) {
        double[] scores = new double[candidates.size()];
        for (int i = 0; i < scores.length; i++) {
            double usage = candidates.get(i).metrics().kvCacheUsage();
            scores[i] = Double.isFinite(usage) ? Math.clamp(1.0 - usage, 0.0, 1.0) : 0.0;
        }
        return scores;
    }
}
