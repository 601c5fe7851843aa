package dev.patchbay.router.proxy;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.LoraSpreadFilter;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.place.PlacementController;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.EndpointStatus;
import dev.patchbay.router.pool.ScrapeFailure;
import dev.patchbay.router.route.RequestLifecycle;
import dev.patchbay.router.route.RouteDecision;
import dev.patchbay.router.scrape.LoraPlacement;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Supplier;

/** The router's own metrics, served on its {@code /metrics}. */
public final class RouterMetrics {
    private static final double[] LATENCY_BOUNDS = {
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300
    };

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter picks;
    private final Counter placements;
    private final Counter scrapeFailures;
    private final Counter staleDataPicks;
    private final Counter responses;
    private final Histogram pickLatency;
    private final Histogram requestLatency;

    public RouterMetrics() {
        picks = Counter.builder()
                .name("patchbay_router_picks_total")
                .help("Requests each endpoint took (through Envoy: the endpoint the data plane reports served it)")
                .labelNames("endpoint")
                .register(registry);
        placements = Counter.builder()
                .name("patchbay_router_adapter_placement_total")
                .help(
                        "Where the chosen endpoint held the request's adapter when picked: in_slot, loading "
                                + "(requests for it wait there for its load), in_host, neither (base_model for base-model requests)")
                .labelNames("placement")
                .register(registry);
        scrapeFailures = Counter.builder()
                .name("patchbay_router_scrape_failures_total")
                .help("Failed metrics scrapes per endpoint, by reason: unreachable, timeout, http_status, malformed, "
                        + "missing_family (a family the scorers need is not on the page), invalid_value (NaN, infinite "
                        + "or negative), error")
                .labelNames("endpoint", "reason")
                .register(registry);
        staleDataPicks = Counter.builder()
                .name("patchbay_router_stale_data_picks_total")
                .help("Requests sent on stale data: no endpoint's data was within the staleness bound, so the "
                        + "freshest last good data within the max-staleness bound stood in")
                .register(registry);
        responses = Counter.builder()
                .name("patchbay_router_responses_total")
                .help("Responses by HTTP status")
                .labelNames("code")
                .register(registry);
        pickLatency = Histogram.builder()
                .name("patchbay_router_pick_seconds")
                .help("Time from request arrival to the chosen endpoint (body parsing and picking)")
                .classicOnly()
                .classicUpperBounds(LATENCY_BOUNDS)
                .register(registry);
        requestLatency = Histogram.builder()
                .name("patchbay_router_proxy_latency_seconds")
                .help("Time from request arrival to the last byte of the response sent")
                .classicOnly()
                .classicUpperBounds(LATENCY_BOUNDS)
                .register(registry);
    }

    /** Registers the per-endpoint gauges that read the pool's state at scrape time. */
    public void watch(EndpointPool pool) {
        Supplier<Iterable<EndpointStatus>> statuses = pool::statuses;
        GaugeWithCallback.builder()
                .name("patchbay_router_endpoint_data_age_seconds")
                .help("Seconds since the endpoint's last good metrics scrape (+Inf before the first)")
                .labelNames("endpoint")
                .callback(cb -> {
                    long now = System.nanoTime();
                    for (EndpointStatus s : statuses.get()) {
                        cb.call(s.ageSeconds(now), s.endpoint().address());
                    }
                })
                .register(registry);
        CounterWithCallback.builder()
                .name("patchbay_router_scrapes_total")
                .help(
                        "Metrics scrapes per endpoint that gave data (failed ones: patchbay_router_scrape_failures_total); "
                                + "their rate shows whether the scrape interval holds")
                .labelNames("endpoint")
                .callback(cb -> pool.goodScrapes().forEach((endpoint, n) -> cb.call(n, endpoint.address())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("patchbay_router_endpoint_ready")
                .help("1 when the endpoint may get new requests")
                .labelNames("endpoint")
                .callback(cb -> {
                    Set<Endpoint> ready = new HashSet<>();
                    for (EndpointState state : pool.readyStates()) {
                        ready.add(state.endpoint());
                    }
                    for (EndpointStatus s : statuses.get()) {
                        cb.call(
                                ready.contains(s.endpoint()) ? 1 : 0,
                                s.endpoint().address());
                    }
                })
                .register(registry);
        GaugeWithCallback.builder()
                .name("patchbay_router_endpoint_served_models")
                .help("Models (base models and adapters) the endpoint lists on /v1/models, as last fetched; 0 while "
                        + "the router has no list from it, when it may get requests for any model")
                .labelNames("endpoint")
                .callback(cb -> pool.servedModels()
                        .forEach((endpoint, list) -> cb.call(list.models().size(), endpoint.address())))
                .register(registry);
        GaugeWithCallback.builder()
                .name("patchbay_router_endpoint_prompt_tokens_in_flight")
                .help("Estimated prompt tokens of requests sent to the endpoint with no byte of answer yet")
                .labelNames("endpoint")
                .callback(cb -> {
                    for (EndpointStatus s : statuses.get()) {
                        cb.call(
                                pool.promptTokensInFlight(s.endpoint()),
                                s.endpoint().address());
                    }
                })
                .register(registry);
    }

    /** Registers the gauge of adapter requests waiting in the router for a slot (flow control's slot wait). */
    public void watch(RequestLifecycle lifecycle) {
        GaugeWithCallback.builder()
                .name("patchbay_router_requests_waiting_for_slot")
                .help("Adapter requests held in the router because no endpoint has a batch slot for their adapter")
                .callback(cb -> cb.call(lifecycle.waitingForSlot()))
                .register(registry);
        CounterWithCallback.builder()
                .name("patchbay_router_slot_waits_total")
                .help("Adapter requests that waited in the router for a batch slot")
                .callback(cb -> cb.call(lifecycle.waitedForSlot()))
                .register(registry);
        CounterWithCallback.builder()
                .name("patchbay_router_slot_refusals_total")
                .help("Adapter requests a server refused for want of a batch slot (another router took the slot the "
                        + "page showed free) and that waited in the router again")
                .callback(cb -> cb.call(lifecycle.slotRefusals()))
                .register(registry);
    }

    /** Registers the placement controller's decisions: homes desired and held per adapter, loads and unloads. */
    public void watch(PlacementController placement) {
        GaugeWithCallback.builder()
                .name("patchbay_router_placement_homes")
                .help("Servers per placed adapter: desired (placement's homes) and actual (servers holding it in a "
                        + "slot or in host memory), as of the last placement tick")
                .labelNames("adapter", "kind")
                .callback(cb -> placement.report().adapters().forEach((adapter, p) -> {
                    if (p.desired().isEmpty()) return;
                    cb.call(p.desired().size(), adapter, "desired");
                    cb.call(p.actual().size(), adapter, "actual");
                }))
                .register(registry);
        CounterWithCallback.builder()
                .name("patchbay_router_placement_loads_total")
                .help("Adapter loads placement asked servers for ahead of demand, by outcome (started counts all)")
                .labelNames("outcome")
                .callback(cb -> {
                    cb.call(placement.loadsStarted(), "started");
                    cb.call(placement.loadsFailed(), "failed");
                })
                .register(registry);
        CounterWithCallback.builder()
                .name("patchbay_router_placement_unloads_total")
                .help("Surplus adapter copies placement asked servers to unload, by outcome (started counts all)")
                .labelNames("outcome")
                .callback(cb -> {
                    cb.call(placement.unloadsStarted(), "started");
                    cb.call(placement.unloadsFailed(), "failed");
                })
                .register(registry);
    }

    /** Registers the lora-spread filter's drains: the slot moves the router decides on. */
    public void watch(LoraSpreadFilter spread) {
        CounterWithCallback.builder()
                .name("patchbay_router_lora_drains_started_total")
                .help("Drains started: an endpoint stops getting one slot adapter's requests so that its slot "
                        + "frees for a hot or stuck adapter")
                .callback(cb -> cb.call(spread.drainsStarted()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("patchbay_router_lora_drain")
                .help("1 per drain in progress: adapter is no longer sent to endpoint, to free its slot for_adapter")
                .labelNames("endpoint", "adapter", "for_adapter")
                .callback(cb -> {
                    for (LoraSpreadFilter.DrainView d : spread.drainsInProgress()) {
                        cb.call(1, d.endpoint().address(), d.adapter(), d.forAdapter());
                    }
                })
                .register(registry);
    }

    /**
     * The decided request sent to {@code target} (the endpoint that took it, after any retry): counted per endpoint,
     * by where it held the request's adapter, and when the decision was made on stale data.
     */
    public void picked(EndpointState target, RouteDecision decision) {
        PickRequest request = decision.request();
        picks.labelValues(target.endpoint().address()).inc();
        if (decision.staleData()) {
            staleDataPicks.inc();
        }
        LoraPlacement placement = request.baseModel() ? null : LoraPlacement.of(target.metrics(), request.model());
        String label = placement == null
                ? "base_model"
                : switch (placement) {
                    case IN_SLOT -> "in_slot";
                    case LOADING -> "loading";
                    case QUEUED -> "queued";
                    case IN_HOST -> "in_host";
                    default -> "neither";
                };
        placements.labelValues(label).inc();
    }

    public void scrapeFailed(Endpoint endpoint, ScrapeFailure reason) {
        scrapeFailures.labelValues(endpoint.address(), reason.label()).inc();
    }

    public void responded(int status) {
        responses.labelValues(Integer.toString(status)).inc();
    }

    public void pickTook(long nanos) {
        pickLatency.observe(nanos / 1e9);
    }

    public void requestTook(long nanos) {
        requestLatency.observe(nanos / 1e9);
    }

    public void write(OutputStream out) throws IOException {
        PrometheusTextFormatWriter.create().write(out, registry.scrape(), EscapingScheme.ALLOW_UTF8);
    }
}
