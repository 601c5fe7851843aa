package dev.patchbay.router.config;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.random.RandomGenerator;

/** Applies the configured rewrites with a weighted random draw. Thread-safe if the random is. */
public final class ModelRewriter {
    private final Map<String, ModelRewrite> bySource = new HashMap<>();
    private final Map<String, Integer> totals = new HashMap<>();
    private final RandomGenerator random;

    /** No rewrites: every model is served as requested. */
    public static final ModelRewriter NONE = new ModelRewriter(List.of(), new Random(0));

    public ModelRewriter(List<ModelRewrite> rewrites, RandomGenerator random) {
        for (ModelRewrite rewrite : rewrites) {
            if (bySource.put(rewrite.model(), rewrite) != null) {
                throw new IllegalArgumentException("two rewrites for model " + rewrite.model());
            }
            totals.put(rewrite.model(), rewrite.totalWeight());
        }
        this.random = random;
    }

    public boolean isSource(String model) {
        return bySource.containsKey(model);
    }

    /** The model to serve: a weighted draw among the targets, or {@code model} itself. */
    public String rewrite(String model) {
        ModelRewrite rewrite = bySource.get(model);
        if (rewrite == null) {
            return model;
        }
        int draw = random.nextInt(totals.get(model));
        for (ModelRewrite.Target target : rewrite.targets()) {
            draw -= target.weight();
            if (draw < 0) {
                return target.model();
            }
        }
        return rewrite.targets().getLast().model();
    }

    /** Every target name, so that the router knows them as servable models. */
    public List<String> targets() {
        return bySource.values().stream()
                .flatMap(r -> r.targets().stream())
                .map(ModelRewrite.Target::model)
                .toList();
    }
}
