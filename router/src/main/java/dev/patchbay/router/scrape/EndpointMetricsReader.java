package dev.patchbay.router.scrape;

import dev.patchbay.router.prom.MalformedPageException;
import dev.patchbay.router.prom.MetricsPage;
import dev.patchbay.router.prom.PrometheusTextParser;
import dev.patchbay.router.prom.Sample;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a metrics page (Patchbay's or vLLM's) into {@link EndpointMetrics}. {@link #readRoutable} is what the router
 * scrapes with: it refuses a page that does not show the server's load. {@link #read} reads any page, a missing family
 * as zero, for pages known to be complete and for reading parts of one.
 */
public final class EndpointMetricsReader {
    private final PrometheusTextParser parser = new PrometheusTextParser(MetricFamilies.ALL_SET::contains);

    public EndpointMetrics read(String page) throws MalformedPageException {
        return read(page, AdapterIds.UNPOOLED);
    }

    /** The page's metrics, their adapter ids in {@code ids} (a pool's table). */
    public EndpointMetrics read(String page, AdapterIds ids) throws MalformedPageException {
        return read(parser.parse(page), ids);
    }

    /**
     * As {@link #read(String, AdapterIds)}, for a page the router is to route on: it must carry samples of the
     * families the queue and KV-cache scorers and the saturation check read ({@link MetricFamilies#WAITING},
     * {@link MetricFamilies#RUNNING}, and {@link MetricFamilies#KV_USAGE} or, from older vLLM versions,
     * {@link MetricFamilies#KV_USAGE_OLD}), each value finite and not negative. Read as zeros, a page without them
     * would make a server of unknown load look idle and draw traffic to it.
     */
    public EndpointMetrics readRoutable(String page, AdapterIds ids)
            throws MalformedPageException, UnusablePageException {
        MetricsPage parsed = parser.parse(page);
        checkLoad(parsed);
        return read(parsed, ids);
    }

    /** Throws unless {@code page} shows the waiting and running queues and KV-cache usage, with values a server reports. */
    static void checkLoad(MetricsPage page) throws UnusablePageException {
        checkFamily(page, MetricFamilies.WAITING, MetricFamilies.WAITING);
        checkFamily(page, MetricFamilies.RUNNING, MetricFamilies.RUNNING);
        checkFamily(page, kvFamily(page), MetricFamilies.KV_USAGE + " (or " + MetricFamilies.KV_USAGE_OLD + ")");
    }

    private static void checkFamily(MetricsPage page, String family, String described) throws UnusablePageException {
        List<Sample> samples = page.samples(family);
        if (samples.isEmpty()) {
            throw new UnusablePageException(
                    UnusablePageException.Problem.MISSING_FAMILY, "the page has no sample of " + described);
        }
        for (Sample s : samples) {
            if (!Double.isFinite(s.value()) || s.value() < 0) {
                throw new UnusablePageException(
                        UnusablePageException.Problem.INVALID_VALUE,
                        family + " is " + s.value() + ", not a finite number >= 0");
            }
        }
    }

    /** vLLM's current name for KV-cache usage when the page has it, else the older one. */
    private static String kvFamily(MetricsPage page) {
        return page.samples(MetricFamilies.KV_USAGE).isEmpty() ? MetricFamilies.KV_USAGE_OLD : MetricFamilies.KV_USAGE;
    }

    public EndpointMetrics read(MetricsPage page) {
        return read(page, AdapterIds.UNPOOLED);
    }

    public EndpointMetrics read(MetricsPage page, AdapterIds ids) {
        EndpointMetrics.Builder out = EndpointMetrics.builder()
                .ids(ids)
                .modelName(modelName(page))
                .waitingRequests(sumAsInt(page.samples(MetricFamilies.WAITING)))
                .runningRequests(sumAsInt(page.samples(MetricFamilies.RUNNING)))
                .kvCacheUsage(kvUsage(page));
        List<Sample> byReason = page.samples(MetricFamilies.WAITING_BY_REASON);
        if (!byReason.isEmpty()) {
            out.waitingDeferred(sumAsInt(byReason.stream()
                    .filter(s -> s.label("reason").equals("deferred"))
                    .toList()));
        }
        List<Sample> tokensWaiting = page.samples(MetricFamilies.TOKENS_WAITING);
        if (!tokensWaiting.isEmpty()) {
            out.tokensWaiting(Math.max(
                    0,
                    Math.round(tokensWaiting.stream().mapToDouble(Sample::value).sum())));
        }
        readLegacy(page, out);
        boolean hasNew = page.hasFamily(MetricFamilies.MAX_GPU_LORAS)
                || page.hasFamily(MetricFamilies.LORA_LOADED)
                || page.hasFamily(MetricFamilies.LORA_RUNNING)
                || page.hasFamily(MetricFamilies.LORA_WAITING);
        if (hasNew) {
            readResidency(page, out);
        }
        return out.build();
    }

    private static String modelName(MetricsPage page) {
        for (String family : List.of(MetricFamilies.RUNNING, MetricFamilies.WAITING, MetricFamilies.KV_USAGE)) {
            for (Sample s : page.samples(family)) {
                String name = s.label("model_name");
                if (!name.isEmpty()) {
                    return name;
                }
            }
        }
        return null;
    }

    private static double kvUsage(MetricsPage page) {
        List<Sample> samples = page.samples(kvFamily(page));
        // With several engines (data parallel) the fullest one decides whether a request fits.
        double max = 0;
        for (Sample s : samples) {
            if (Double.isFinite(s.value())) {
                max = Math.max(max, s.value());
            }
        }
        return Math.min(max, 1.0);
    }

    /**
     * The legacy gauge. Each change of a server's running or waiting adapters writes a series whose value is the time
     * of the change, and old series stay on the page: the newest value is the server's state. vLLM and
     * llm-d-inference-sim write that time in whole seconds, so a request that ends and another that starts within one
     * second leave several series with the newest value, in an order on the page that follows their label values and
     * says nothing about which came last. Any of them may be the latest, but not one whose adapters could not all have
     * a request on the page's own queues (more adapters running than requests running): that leaves, e.g., only the
     * empty series on an idle server. The remaining ones are read as one, their adapters joined: an adapter that had a
     * request within that second is still loaded (a server evicts an idle adapter only when its slot is needed), so
     * its next request is best sent here; the cost is that such a slot counts as busy until the page changes. When no
     * series fits the queues (the gauges are updated a moment apart), every tied series is joined.
     */
    private static void readLegacy(MetricsPage page, EndpointMetrics.Builder out) {
        List<Sample> newest = new ArrayList<>();
        for (Sample s : page.samples(MetricFamilies.LORA_INFO)) {
            if (Double.isNaN(s.value())) {
                continue;
            }
            if (!newest.isEmpty() && s.value() > newest.getFirst().value()) {
                newest.clear();
            }
            if (newest.isEmpty() || s.value() == newest.getFirst().value()) {
                newest.add(s);
            }
        }
        if (newest.isEmpty()) {
            return;
        }
        List<Sample> possible = newest;
        if (newest.size() > 1 && page.hasFamily(MetricFamilies.RUNNING) && page.hasFamily(MetricFamilies.WAITING)) {
            int running = sumAsInt(page.samples(MetricFamilies.RUNNING));
            int waiting = sumAsInt(page.samples(MetricFamilies.WAITING));
            possible = newest.stream()
                    .filter(s -> splitAdapters(s.label("running_lora_adapters")).size() <= running
                            && splitAdapters(s.label("waiting_lora_adapters")).size() <= waiting)
                    .toList();
            if (possible.isEmpty()) {
                possible = newest;
            }
        }
        int maxLora = 0;
        for (Sample s : possible) {
            out.activeAdapters(splitAdapters(s.label("running_lora_adapters")));
            out.waitingAdapters(splitAdapters(s.label("waiting_lora_adapters")));
            maxLora = Math.max(maxLora, parseCount(s.label("max_lora")));
        }
        out.maxLora(maxLora);
    }

    private static void readResidency(MetricsPage page, EndpointMetrics.Builder out) {
        out.hasResidencyFamilies(true);
        perAdapter(page.samples(MetricFamilies.LORA_RUNNING)).forEach(out::adapterRunning);
        perAdapter(page.samples(MetricFamilies.LORA_WAITING)).forEach(out::adapterWaiting);
        int inSlots = 0;
        Map<String, AdapterResidency> residency = new HashMap<>();
        for (Sample s : page.samples(MetricFamilies.LORA_LOADED)) {
            String adapter = adapterName(s);
            if (adapter.isEmpty() || !(s.value() > 0)) {
                continue;
            }
            boolean inSlot = s.label("level").equals("gpu");
            AdapterResidency here = new AdapterResidency(
                    inSlot, s.label("pinned").equalsIgnoreCase("true"), parseCount(s.label("rank")));
            // An adapter listed at both tiers counts at the faster one.
            residency.merge(adapter, here, (a, b) -> a.inSlot() ? a : b);
        }
        for (Map.Entry<String, AdapterResidency> e : residency.entrySet()) {
            out.resident(e.getKey(), e.getValue());
            if (e.getValue().inSlot()) {
                inSlots++;
            }
        }
        List<Sample> capacity = page.samples(MetricFamilies.MAX_GPU_LORAS);
        List<Sample> used = page.samples(MetricFamilies.GPU_LORAS_LOADED);
        out.slots(sumAsInt(capacity), used.isEmpty() ? inSlots : sumAsInt(used));
    }

    private static Map<String, Integer> perAdapter(List<Sample> samples) {
        Map<String, Integer> counts = new HashMap<>();
        for (Sample s : samples) {
            String adapter = adapterName(s);
            if (!adapter.isEmpty() && Double.isFinite(s.value())) {
                counts.merge(adapter, (int) Math.round(s.value()), Integer::sum);
            }
        }
        // A zero says nothing a missing series does not; dropping them gives one EndpointMetrics per state.
        counts.values().removeIf(count -> count == 0);
        return counts;
    }

    /** Patchbay labels adapters with lora_name; vLLM's proposed families use adapter_name. */
    private static String adapterName(Sample s) {
        String name = s.label("lora_name");
        return name.isEmpty() ? s.label("adapter_name") : name;
    }

    static Set<String> splitAdapters(String label) {
        Set<String> names = new HashSet<>();
        for (String part : label.split(",")) {
            String name = part.trim();
            if (!name.isEmpty()) {
                names.add(name);
            }
        }
        return names;
    }

    private static int sumAsInt(List<Sample> samples) {
        double sum = 0;
        for (Sample s : samples) {
            if (Double.isFinite(s.value())) {
                sum += s.value();
            }
        }
        return (int) Math.round(Math.max(0, Math.min(sum, Integer.MAX_VALUE)));
    }

    private static int parseCount(String text) {
        try {
            return Math.max(0, (int) Math.round(Double.parseDouble(text.trim())));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
