package dev.patchbay.router.config;

import java.util.List;

/**
 * Spreads requests for a public model name over target models by weight, like the gateway's
 * InferenceModelRewrite (an adapter roll-out: 90% to v1, 10% to v2).
 */
public record ModelRewrite(String model, List<Target> targets) {
    public record Target(String model, int weight) {}

    public ModelRewrite {
        if (model == null || model.isBlank()) {
            throw new IllegalArgumentException("a rewrite needs a model name");
        }
        if (targets == null || targets.isEmpty()) {
            throw new IllegalArgumentException("rewrite of " + model + " has no targets");
        }
        for (Target t : targets) {
            if (t.model() == null || t.model().isBlank() || t.weight() <= 0) {
                throw new IllegalArgumentException(
                        "rewrite of " + model + ": every target needs a model and a positive weight");
            }
        }
        targets = List.copyOf(targets);
    }

    int totalWeight() {
        long sum = 0;
        for (Target t : targets) {
            sum += t.weight();
        }
        if (sum > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("rewrite of " + model + ": weights sum too large");
        }
        return (int) sum;
    }
}
