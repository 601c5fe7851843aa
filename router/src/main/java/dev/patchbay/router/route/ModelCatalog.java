package dev.patchbay.router.route;

import dev.patchbay.router.config.ModelRewriter;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointStatus;
import dev.patchbay.router.pool.ServedModels;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Decides what a requested model name is, and where it is served. The kind:
 * <ol>
 *   <li>a base model: listed in the config's {@code baseModels}, the {@code model_name} any endpoint reports, or an
 *       entry without a parent in any endpoint's {@code /v1/models};</li>
 *   <li>a known adapter: listed in {@code adapters}, a rewrite target, named by any endpoint's LoRA metrics (even
 *       one not ready now), or an entry with a parent in any endpoint's {@code /v1/models};</li>
 *   <li>otherwise, when the config lists {@code adapters} that list is taken as complete and the
 *       name is unknown (400); when it does not, the name may be an adapter no server has loaded
 *       yet, so it is forwarded as an adapter and the server answers 404 if it has no such
 *       adapter.</li>
 * </ol>
 * Where ({@link #servedBy}): when some endpoint lists the name on {@code /v1/models}, only the endpoints that list it
 * and those whose list the router does not know; when none does, every endpoint.
 * Rewrite sources are resolved before this is asked.
 */
public final class ModelCatalog {
    public enum Kind {
        BASE_MODEL,
        ADAPTER,
        UNKNOWN
    }

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

    /** The kind of {@code model}, by the config, the endpoints' metrics and their model lists. */
    public Kind classify(String model, List<EndpointStatus> endpoints, Collection<ServedModels> lists) {
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
        for (ServedModels list : lists) {
            if (list.baseModels().contains(model)) {
                return Kind.BASE_MODEL;
            }
            mentioned |= list.lists(model);
        }
        return mentioned || !adapterListComplete ? Kind.ADAPTER : Kind.UNKNOWN;
    }

    /**
     * The endpoints {@code model} may be sent to. When at least one endpoint lists it on {@code /v1/models}, those
     * that list it and those whose list is not known (never fetched, failed, unsupported): an endpoint that answers
     * with a list without the model would answer the request with 404. When none lists it, every endpoint, since a
     * server may load an adapter it does not list on demand (Patchbay's {@code --lora-resolver-dir}, vLLM's LoRA
     * resolvers). {@link RequestLifecycle#ANY_ENDPOINT} when nothing is left out.
     */
    public Predicate<Endpoint> servedBy(String model, Map<Endpoint, ServedModels> lists) {
        boolean listed = false;
        Set<Endpoint> notListing = new HashSet<>();
        for (Map.Entry<Endpoint, ServedModels> e : lists.entrySet()) {
            ServedModels list = e.getValue();
            if (list.lists(model)) {
                listed = true;
            } else if (list.known()) {
                notListing.add(e.getKey());
            }
        }
        return listed && !notListing.isEmpty() ? new ListedBy(model, notListing) : RequestLifecycle.ANY_ENDPOINT;
    }

    /**
     * Every endpoint but those in {@code notListing}, whose model lists lack {@code model}. A value, so that two
     * requests for one model over the same lists compare equal (slot wait repicks them together).
     */
    record ListedBy(String model, Set<Endpoint> notListing) implements Predicate<Endpoint> {
        ListedBy {
            notListing = Set.copyOf(notListing);
        }

        @Override
        public boolean test(Endpoint endpoint) {
            return !notListing.contains(endpoint);
        }
    }

    private static boolean mentions(EndpointMetrics m, String adapter) {
        return m.residency().containsKey(adapter)
                || m.activeAdapters().contains(adapter)
                || m.waitingAdapters().contains(adapter)
                || m.adapterRunning().containsKey(adapter)
                || m.adapterWaiting().containsKey(adapter);
    }
}
