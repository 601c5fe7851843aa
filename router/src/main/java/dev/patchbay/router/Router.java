package dev.patchbay.router;

import dev.patchbay.router.config.ModelRewriter;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.extproc.ExtProcServer;
import dev.patchbay.router.extproc.ExtProcService;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.LoraSpreadFilter;
import dev.patchbay.router.place.HttpAdapterAdmin;
import dev.patchbay.router.place.Placement;
import dev.patchbay.router.place.PlacementController;
import dev.patchbay.router.place.PlacementJson;
import dev.patchbay.router.place.Placements;
import dev.patchbay.router.place.PoolFleet;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.MetricsFetcher;
import dev.patchbay.router.pool.ModelsFetcher;
import dev.patchbay.router.proxy.ProxyHandler;
import dev.patchbay.router.proxy.RouterMetrics;
import dev.patchbay.router.route.OpenAiError;
import dev.patchbay.router.route.RequestLifecycle;
import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.http.Status;
import io.helidon.webserver.WebServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** The standalone router: scrapes the pool and proxies OpenAI requests to the picked server. */
public final class Router implements AutoCloseable {
    private final RouterOptions options;
    private final RouterMetrics metrics = new RouterMetrics();
    private final ExecutorService clientThreads = Executors.newVirtualThreadPerTaskExecutor();
    private final HttpClient proxyClient;
    private final HttpClient scrapeClient;
    private final EndpointPool pool;
    private final EndpointPicker picker;
    private final RequestLifecycle lifecycle;
    private final ProxyHandler proxy;
    /** Null with placement off. */
    private final PlacementController placement;
    /** A load from storage may take a while; an admin call that hangs longer is given up. */
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

    private WebServer server;
    private ExtProcServer extProc;

    public Router(RouterOptions options) {
        this.options = options;
        Random random = options.config().seed() == null
                ? new Random()
                : new Random(options.config().seed());
        // Separate clients: scrapes never queue behind long streamed answers, and a connection a
        // scrape left open is never what a proxied request finds dead.
        proxyClient = newClient(options);
        scrapeClient = newClient(options);
        MetricsFetcher fetcher = new MetricsFetcher(scrapeClient, options.staleness());
        pool = new EndpointPool(
                options.endpoints(),
                EndpointPool.pages(fetcher::fetch),
                options.scrapeInterval(),
                options.staleness(),
                options.maxStaleness(),
                metrics::scrapeFailed,
                System::nanoTime);
        Duration listInterval = options.servedModelsInterval();
        if (!listInterval.isZero()) {
            // bounded by the interval: at most one list fetch per endpoint is in flight anyway
            pool.learnServedModels(new ModelsFetcher(scrapeClient, listInterval)::fetch, listInterval);
        }
        metrics.watch(pool);
        RouterConfig.PlacementConfig placementConfig = options.config().effectivePlacement();
        if (placementConfig.on()) {
            Map<String, String> configured = placementConfig.adapterPaths();
            placement = new PlacementController(
                    placementConfig.settings(),
                    Placements.create(placementConfig.algorithmName()),
                    () -> PoolFleet.read(pool, configured),
                    new HttpAdapterAdmin(scrapeClient, ADMIN_TIMEOUT),
                    System::nanoTime);
            metrics.watch(placement);
        } else {
            placement = null;
        }
        picker = options.config().createPicker(random, placement == null ? () -> Placement.NONE : placement::placement);
        for (var filter : picker.filters()) {
            if (filter instanceof LoraSpreadFilter spread) {
                metrics.watch(spread);
            }
        }
        ModelRewriter rewriter = new ModelRewriter(options.config().rewrites(), random);
        lifecycle = new RequestLifecycle(pool, picker, options.config(), rewriter);
        if (placement != null) {
            lifecycle.placeWith(placement);
        }
        metrics.watch(lifecycle);
        proxy = new ProxyHandler(pool, lifecycle, proxyClient, metrics);
    }

    private HttpClient newClient(RouterOptions options) {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(options.staleness())
                .executor(clientThreads)
                .build();
    }

    public synchronized Router start() {
        if (server != null) {
            return this;
        }
        pool.tick();
        pool.start();
        server = WebServer.builder()
                .host(options.host())
                .port(options.port())
                // TCP_NODELAY: proxied chunks must not wait on the client's delayed ACK.
                .connectionOptions(o -> o.tcpNoDelay(true))
                // Errors the server raises itself (a request it cannot parse) get the OpenAI shape too.
                .directHandlers(handlers -> {
                    for (DirectHandler.EventType type : DirectHandler.EventType.values()) {
                        handlers.addHandler(type, Router::openAiError);
                    }
                })
                .routing(routing -> routing.post("/v1/completions", proxy::handleModelRequest)
                        .post("/v1/chat/completions", proxy::handleModelRequest)
                        .get("/v1/models", proxy::handleModels)
                        .get("/metrics", (req, res) -> {
                            res.header("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                            try (OutputStream out = res.outputStream()) {
                                metrics.write(out);
                            }
                        })
                        .get("/health", (req, res) -> res.send("ok"))
                        // Readiness, as the gRPC face's: a router that has not yet seen every server could only
                        // refuse or guess, so a rollout waits for its first scrape round before sending it traffic.
                        .get("/ready", (req, res) -> {
                            if (pool.synced()) {
                                res.send("ready");
                            } else {
                                res.status(Status.SERVICE_UNAVAILABLE_503)
                                        .send("not ready: the first scrape round has not ended");
                            }
                        })
                        .get("/admin/placement", (req, res) -> {
                            res.header("Content-Type", "application/json");
                            res.send(PlacementJson.write(placement));
                        })
                        .any(proxy::handleUnknownPath))
                .build()
                .start();
        // Helidon logs a failed bind and returns a stopped server rather than throwing.
        if (!server.isRunning() || server.port() < 0) {
            server = null;
            pool.close();
            throw new IllegalStateException(
                    "cannot listen on " + options.host() + ":" + options.port() + " (address in use or not available)");
        }
        if (options.extProcPort() != RouterOptions.NO_EXT_PROC) {
            try {
                extProc = ExtProcServer.start(
                        options.host(),
                        options.extProcPort(),
                        options.healthPort(),
                        new ExtProcService(lifecycle, metrics, options.extProcFallbacks()),
                        pool::synced);
            } catch (IOException e) {
                stop();
                throw new IllegalStateException(
                        "cannot listen for ext_proc on " + options.host() + ":" + options.extProcPort() + ": "
                                + e.getMessage(),
                        e);
            }
        }
        return this;
    }

    /** Helidon's own errors in OpenAI's shape; a server error says only its status, not what went wrong inside. */
    private static DirectHandler.TransportResponse openAiError(
            DirectHandler.TransportRequest request,
            DirectHandler.EventType type,
            Status status,
            ServerResponseHeaders headers,
            String message) {
        String text = message == null || message.isBlank() || status.code() >= 500 ? status.reasonPhrase() : message;
        return DirectHandler.TransportResponse.builder()
                .status(status)
                .headers(headers)
                .header(HeaderNames.CONTENT_TYPE, "application/json")
                .keepAlive(type.keepAlive())
                .entity(OpenAiError.ofStatus(status.code(), text).body())
                .build();
    }

    /** The external processor's gRPC port, when it runs. */
    public synchronized int extProcPort() {
        if (extProc == null) {
            throw new IllegalStateException("no external processor is running");
        }
        return extProc.port();
    }

    /** The port of the gRPC health services' own server, when it runs. */
    public synchronized int healthPort() {
        if (extProc == null || !extProc.hasHealthPort()) {
            throw new IllegalStateException("no gRPC health port is served");
        }
        return extProc.healthPort();
    }

    /** The port the router listens on (useful with port 0). */
    public synchronized int port() {
        if (server == null) {
            throw new IllegalStateException("router not started");
        }
        return server.port();
    }

    public EndpointPool pool() {
        return pool;
    }

    public RequestLifecycle lifecycle() {
        return lifecycle;
    }

    public EndpointPicker picker() {
        return picker;
    }

    /** The placement controller, or null with placement off. */
    public PlacementController placement() {
        return placement;
    }

    public synchronized void stop() {
        if (extProc != null) {
            extProc.close();
            extProc = null;
        }
        if (server != null) {
            server.stop();
            server = null;
        }
        pool.close();
        proxyClient.shutdownNow();
        scrapeClient.shutdownNow();
        clientThreads.shutdownNow();
    }

    @Override
    public void close() {
        stop();
    }
}
