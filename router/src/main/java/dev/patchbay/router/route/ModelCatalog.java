package dev.patchbay.router.route;

import dev.patchbay.router.config.ModelRewriter;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pool.EndpointStatus;
import dev.patchbay.router.scrape.EndpointMetrics;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Decides what a requested model name is. The rule:
 * <ol>
 *   <li>a base model: listed in the config's {@code baseModels}, or the {@code model_name} any
 *       endpoint reports;</li>
 *   <li>a known adapter: listed in {@code adapters}, a rewrite target, or named by any endpoint's
 *       LoRA metrics (even one not ready now);</li>
 *   <li>otherwise, when the config lists {@code adapters} that list is taken as complete and the
 *       name is unknown (400); when it does not, the name may be an adapter no server has loaded
 *       yet, so it is forwarded as an adapter and the server answers 404 if it has no such
 *       adapter.</li>
 * </ol>
 * Rewrite sources are resolved before this is asked.
 */
public final class ModelCatalog {
    public enum Kind { BASE_MODEL, ADAPTER, UNKNOWN }

    private final Set<String> baseModels;
    private final Set<String> adapters;
    private final boolean adapterListComplete;

    public ModelCatalog(RouterConfig config, ModelRewriter rewriter) {
        baseModels = Set.copyOf(config.baseModels());
        Set<String> known = new HashSet<>(rewriter.targets());
        if (config.adapters() != null) {
            known.addAll(config.adapters());
        }
        adapters = Set.copyOf(known);
        adapterListComplete = config.adapters() != null;
    }

    public Kind classify(String model, List<EndpointStatus> endpoints) {
        if (baseModels.contains(model)) {
            return Kind.BASE_MODEL;
        }
        if (adapters.contains(model)) {
            return Kind.ADAPTER;
        }
        boolean mentioned = false;
        for (EndpointStatus status : endpoints) {
            EndpointMetrics m = status.metrics();
            if (m == null) {
                continue;
            }
            if (model.equals(m.modelName())) {
                return Kind.BASE_MODEL;
            }
            mentioned |= mentions(m, model);
        }
        return mentioned || !adapterListComplete ? Kind.ADAPTER : Kind.UNKNOWN;
    }

    private static boolean mentions(EndpointMetrics m, String adapter) {
        return m.residency().containsKey(adapter) || m.activeAdapters().contains(adapter)
                || m.waitingAdapters().contains(adapter) || m.adapterRunning().containsKey(adapter)
                || m.adapterWaiting().containsKey(adapter);
    }
}
