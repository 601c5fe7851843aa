package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.List;

/**
 * llm-d's {@code lora-residency-filter} (llm-d-router PR #2792), the companion of {@link LoraLoadStateScorer}: it
 * decides whether a new copy of an adapter may be opened, the scorer decides where. The endpoints holding the adapter
 * in a GPU slot are its homes; while one of them is not saturated (waiting queue over {@code queueThreshold} or KV
 * use over {@code kvCacheThreshold}) only the homes are kept. When all are saturated, a new copy is allowed on an
 * unsaturated endpoint holding it in host memory, else on an unsaturated cold one, unless {@code maxReplicas} homes
 * exist already; when nothing has room the homes are kept. An adapter with no home anywhere passes every endpoint.
 */
public final class LoraResidencyFilter implements Filter {
    public static final String NAME = "lora-residency";
    public static final int DEFAULT_QUEUE_THRESHOLD = 8;
    public static final double DEFAULT_KV_CACHE_THRESHOLD = 0.8;

    private final int maxReplicas;
    private final int queueThreshold;
    private final double kvCacheThreshold;

    /**
     * The filter's parameters: a threshold of 0 turns its test off; {@code maxReplicas} 0 means no cap.
     *
     * @param maxReplicas      the most endpoints that may hold an adapter before no new copy opens
     * @param queueThreshold   an endpoint with more waiting requests is saturated
     * @param kvCacheThreshold an endpoint with more KV-cache use is saturated
     */
    public record Settings(int maxReplicas, int queueThreshold, double kvCacheThreshold) {
        public static final Settings DEFAULT = new Settings(0, DEFAULT_QUEUE_THRESHOLD, DEFAULT_KV_CACHE_THRESHOLD);

        public Settings {
            if (maxReplicas < 0 || queueThreshold < 0 || !(kvCacheThreshold >= 0 && kvCacheThreshold <= 1)) {
                throw new IllegalArgumentException("lora-residency: maxReplicas and queueThreshold must be >= 0 and "
                        + "kvCacheThreshold in [0, 1]");
            }
        }
    }

    public LoraResidencyFilter(Settings settings) {
        this.maxReplicas = settings.maxReplicas();
        this.queueThreshold = settings.queueThreshold();
        this.kvCacheThreshold = settings.kvCacheThreshold();
    }

    public LoraResidencyFilter() {
        this(Settings.DEFAULT);
    }

    public int maxReplicas() {
        return maxReplicas;
    }

    public int queueThreshold() {
        return queueThreshold;
    }

    public double kvCacheThreshold() {
        return kvCacheThreshold;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<EndpointState> filter(PickRequest request, List<EndpointState> candidates) {
        if (request.baseModel() || candidates.size() <= 1) return candidates;
        List<EndpointState> homes = new ArrayList<>(), warm = new ArrayList<>(), cold = new ArrayList<>();
        for (EndpointState s : candidates) {
            AdapterResidency r = s.metrics().residency().get(request.model());
            (r == null ? cold : r.inSlot() ? homes : warm).add(s);
        }
        if (homes.isEmpty()) return candidates;
        for (EndpointState h : homes) if (!saturated(h.metrics())) return homes;
        if (maxReplicas > 0 && homes.size() >= maxReplicas) return homes;
        for (List<EndpointState> group : List.of(warm, cold)) {
            List<EndpointState> spare = new ArrayList<>();
            for (EndpointState s : group) if (!saturated(s.metrics())) spare.add(s);
            if (!spare.isEmpty()) return spare;
        }
        return homes;
    }

    private boolean saturated(EndpointMetrics m) {
        return (queueThreshold > 0 && m.waitingRequests() > queueThreshold)
                || (kvCacheThreshold > 0 && m.kvCacheUsage() > kvCacheThreshold);
    }
}
