package dev.patchbay.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.Engine;
import dev.patchbay.engine.EngineConfig;
import dev.patchbay.engine.ModelTarget;
import dev.patchbay.engine.PatchbayVersion;
import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.clock.Clock;
import dev.patchbay.engine.clock.RealClock;
import dev.patchbay.engine.model.Model;
import dev.patchbay.metrics.EngineMetrics;
import dev.patchbay.metrics.MetricsOptions;
import dev.patchbay.metrics.Scrape;
import dev.patchbay.server.http.ApiException;
import dev.patchbay.server.http.ApiKey;
import dev.patchbay.server.http.EngineErrors;
import dev.patchbay.server.http.Http;
import dev.patchbay.server.openai.GenerationHandler;
import dev.patchbay.server.openai.TokenizeHandler;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** The model server: an engine, its metrics, and the OpenAI API over HTTP. */
public final class PatchbayServer {
    public static final String VERSION = PatchbayVersion.VERSION;
    private static final System.Logger LOG = System.getLogger(PatchbayServer.class.getName());
    /** KV blocks of the simulated model, which holds no cache memory, when no override is given. */
    static final int SIMULATED_KV_BLOCKS = 8192;

    /** Start-up failed for a reason the operator must fix (bad model, bad adapter, port in use). */
    public static final class StartupException extends Exception {
        StartupException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final ServerOptions options;
    private final Engine engine;
    private final EngineMetrics metrics;
    private final AdapterPaths adapterPaths;
    private final ApiKey apiKey;
    private final Clock clock = RealClock.INSTANCE;
    private final GenerationHandler generation;
    private final TokenizeHandler tokenization;
    private final List<ServerOptions.LoraModule> staticAdapters = new ArrayList<>();
    private WebServer web;
    /** Ticks the stats line; null with {@code --disable-log-stats}. */
    private ScheduledExecutorService statsLogging;

    private volatile boolean stopping;
    /** Guards {@link #handling}: API handlers running now, so a graceful stop waits for their last bytes. */
    private final Object handlersLock = new Object();

    private int handling;

    private PatchbayServer(ServerOptions options, Engine engine, EngineMetrics metrics, AdapterPaths paths) {
        this.options = options;
        this.engine = engine;
        this.metrics = metrics;
        this.adapterPaths = paths;
        this.apiKey = options.apiKey() == null ? null : new ApiKey(options.apiKey());
        this.generation = new GenerationHandler(engine, clock, this::adapterFor, options.maxRequestBodyBytes());
        this.tokenization = new TokenizeHandler(engine, this::adapterFor, options.maxRequestBodyBytes());
    }

    /**
     * Starts a server: the model, then the steps below in order, each undone (model closed, engine stopped) when a
     * later one fails.
     */
    public static PatchbayServer start(ServerOptions options) throws StartupException {
        Model model = ModelFactory.create(options);
        EngineConfig config;
        MetricsOptions metricsOptions;
        List<ServerOptions.LoraModule> modules;
        AdapterPaths paths;
        try {
            int maxModelLen = maxModelLen(options, model);
            config = engineConfig(options, maxModelLen, kvBlocks(options, model, maxModelLen));
            metricsOptions = metricsOptions(options, config);
            modules = adapterModules(options, model);
            paths = adapterDirectories(options, modules);
        } catch (StartupException | RuntimeException e) {
            model.close();
            throw e;
        }
        Engine engine = Engine.start(config, model, RealClock.INSTANCE);
        try {
            PatchbayServer server = new PatchbayServer(options, engine, metrics(metricsOptions, engine), paths);
            server.useResolverDirectory();
            for (ServerOptions.LoraModule m : modules) server.loadStatic(m);
            server.web = server.serveHttp();
            if (!options.disableLogStats()) server.logStats(StatsLogger.DEFAULT_INTERVAL_NANOS);
            return server;
        } catch (RuntimeException | StartupException e) {
            engine.close();
            throw e instanceof StartupException s ? s : new StartupException(e.getMessage(), e);
        }
    }

    /** The context the engine allows: {@code --max-model-len}, else the model's own limit. */
    static int maxModelLen(ServerOptions options, Model model) {
        return options.maxModelLen() != null
                ? options.maxModelLen()
                : model.config().maxPositionEmbeddings();
    }

    /**
     * KV sizing: the blocks the engine plans with. An executor that holds a cache says how many it has, and the engine
     * plans with exactly those; the simulated one holds none and plans the override or {@link #SIMULATED_KV_BLOCKS}.
     */
    static int kvBlocks(ServerOptions options, Model model, int maxModelLen) throws StartupException {
        OptionalInt held = model.executor().kvCacheBlocks();
        int blocks = held.orElse(options.numKvBlocks() != null ? options.numKvBlocks() : SIMULATED_KV_BLOCKS);
        if (held.isPresent() && options.numKvBlocks() == null && (long) blocks * options.blockSize() < maxModelLen) {
            // As vLLM refuses to start: a request of max_model_len tokens could never be scheduled.
            throw new StartupException(
                    "the KV cache's " + blocks + " blocks of " + options.blockSize() + " tokens hold "
                            + (long) blocks * options.blockSize() + " tokens, fewer than max_model_len " + maxModelLen
                            + "; give it more memory (-Xmx, --gpu-memory-utilization, --kv-cache-memory-bytes) or lower --max-model-len",
                    null);
        }
        return blocks;
    }

    /** The engine's settings from the serve options; an IllegalArgumentException names a value the engine refuses. */
    static EngineConfig engineConfig(ServerOptions options, int maxModelLen, int kvBlocks) {
        return EngineConfig.builder(options.servedName())
                .maxNumSeqs(options.maxNumSeqs())
                .maxNumBatchedTokens(options.maxNumBatchedTokens())
                .maxModelLen(maxModelLen)
                .blockSize(options.blockSize())
                .numKvBlocks(kvBlocks)
                .enablePrefixCaching(options.enablePrefixCaching())
                .enableLora(options.enableLora())
                .maxLoras(options.maxLoras())
                .maxCpuLoras(options.maxCpuLoras())
                .maxLoraRank(options.maxLoraRank())
                .loraDtype(options.loraDtype())
                .maxWaitingRequests(options.maxWaitingRequests())
                .seed(options.seed())
                .maxLogprobs(options.maxLogprobs())
                .build();
    }

    /** The metrics' settings: the engine's, and the serve options that shape the page. */
    static MetricsOptions metricsOptions(ServerOptions options, EngineConfig config) {
        MetricsOptions mo = MetricsOptions.of(config)
                .withShowHiddenMetricsForVersion(options.showHiddenMetricsForVersion())
                .withMaxLoraMetricSeries(options.maxLoraMetricSeries())
                .withEnableLoraLatencyMetrics(options.enableLoraLatencyMetrics());
        return options.patchbayVersion() != null ? mo.withPatchbayVersion(options.patchbayVersion()) : mo;
    }

    /** The adapters to load at start: {@code --lora-modules}, then the demo adapters, written now. */
    static List<ServerOptions.LoraModule> adapterModules(ServerOptions options, Model model) throws StartupException {
        List<ServerOptions.LoraModule> modules = new ArrayList<>(options.loraModules());
        if (options.demoAdapters() > 0) {
            Path demoRoot = DemoAdapters.defaultRoot();
            try {
                modules.addAll(
                        DemoAdapters.write(demoRoot, options.demoAdapters(), model.config(), options.servedName()));
            } catch (IOException e) {
                throw new StartupException("cannot write demo adapters under " + demoRoot + ": " + e.getMessage(), e);
            }
        }
        return modules;
    }

    /**
     * The directories adapter paths must lie under: {@code --lora-allowed-dirs}, or by default the working directory,
     * the resolver directory and the directories of the adapters loaded at start.
     */
    static AdapterPaths adapterDirectories(ServerOptions options, List<ServerOptions.LoraModule> modules) {
        Set<Path> allowed = new LinkedHashSet<>(options.loraAllowedDirs());
        if (allowed.isEmpty()) {
            allowed.add(Path.of("").toAbsolutePath());
            if (options.loraResolverDir() != null) allowed.add(options.loraResolverDir());
            for (ServerOptions.LoraModule m : modules)
                allowed.add(m.path().toAbsolutePath().getParent());
        }
        return new AdapterPaths(List.copyOf(allowed));
    }

    /** The engine's metrics, fed by every snapshot it publishes. */
    private static EngineMetrics metrics(MetricsOptions options, Engine engine) {
        EngineMetrics metrics = new EngineMetrics(options, engine::snapshot);
        engine.addListener(metrics);
        return metrics;
    }

    /** Unknown adapter names are looked up in {@code --lora-resolver-dir}, under the allowed directories. */
    private void useResolverDirectory() {
        if (options.loraResolverDir() != null) {
            engine.adapterRegistry().useResolverDirectory(options.loraResolverDir(), adapterPaths::confine);
        }
    }

    /** The periodic stats line ({@link StatsLogger}), on a daemon thread of its own. */
    private void logStats(long intervalNanos) {
        StatsLogger logger = StatsLogger.toLog(engine::snapshot, clock);
        statsLogging = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("stats-logger").daemon(true).factory());
        statsLogging.scheduleAtFixedRate(logger::tick, intervalNanos, intervalNanos, TimeUnit.NANOSECONDS);
    }

    boolean logsStats() {
        return statsLogging != null;
    }

    /** HTTP: the routes below on Helidon, listening once this returns. */
    private WebServer serveHttp() {
        // TCP_NODELAY: without it a response written in several segments waits on the client's delayed ACK
        // (~40 ms per /metrics page and per streamed token burst).
        return WebServer.builder()
                .host(options.host())
                .port(options.port())
                .shutdownHook(false)
                .connectionOptions(o -> o.tcpNoDelay(true))
                .routing(this::routes)
                .build()
                .start();
    }

    private void loadStatic(ServerOptions.LoraModule m) throws StartupException {
        try {
            EngineErrors.awaitLoad(m.name(), engine.loadAdapter(m.name(), m.path(), false));
            staticAdapters.add(m);
        } catch (AdapterException e) {
            throw new StartupException(
                    "cannot load LoRA adapter '" + m.name() + "' from " + m.path() + ": " + e.getMessage(), e);
        } catch (ApiException e) {
            throw new StartupException(e.getMessage(), e); // it names the adapter
        }
    }

    private void routes(HttpRouting.Builder r) {
        r.get("/health", (req, res) -> {
            if (stopping) Http.sendError(res, 503, "The server is shutting down", null);
            else res.send();
        });
        r.get(
                "/version",
                (req, res) -> Http.sendJson(res, Http.JSON.createObjectNode().put("version", VERSION)));
        r.get("/metrics", this::metrics);
        r.get("/v1/models", api(this::models));
        r.post("/v1/completions", api((req, res) -> generation.handle(req, res, false)));
        r.post("/v1/chat/completions", api((req, res) -> generation.handle(req, res, true)));
        // Outside /v1, so open without the API key, as in vLLM.
        r.post("/tokenize", handled(tokenization::tokenize));
        r.post("/detokenize", handled(tokenization::detokenize));
        if (options.allowRuntimeLoraUpdating()) {
            AdapterAdmin admin = new AdapterAdmin(engine, adapterPaths, options.maxRequestBodyBytes());
            r.post("/v1/load_lora_adapter", api(admin::load));
            r.post("/v1/unload_lora_adapter", api(admin::unload));
        }
        Handler notFound = (req, res) -> Http.sendError(
                res,
                404,
                "Not Found: " + req.prologue().method() + " " + req.path().path(),
                null);
        Handler guardedNotFound = api(notFound);
        // Under /v1 the key is checked first, as vLLM does, so which routes exist stays hidden from a caller without
        // it.
        r.any((req, res) -> (isApiPath(req.path().path()) ? guardedNotFound : notFound).handle(req, res));
    }

    /** The paths {@code --api-key} guards: {@code /v1} and everything under it. */
    static boolean isApiPath(String path) {
        return path.equals("/v1") || path.startsWith("/v1/");
    }

    /** Wraps a /v1 handler: API key, shutdown refusal, and OpenAI-shaped errors for whatever it throws. */
    private Handler api(Handler h) {
        return handled(h, true);
    }

    /** Wraps a handler outside /v1: as {@link #api}, without the API key. */
    private Handler handled(Handler h) {
        return handled(h, false);
    }

    private Handler handled(Handler h, boolean needsKey) {
        return (req, res) -> {
            synchronized (handlersLock) {
                handling++;
            }
            try {
                if (needsKey
                        && apiKey != null
                        && !apiKey.accepts(
                                req.headers().first(HeaderNames.AUTHORIZATION).orElse(null))) {
                    throw new ApiException(
                            401, "Unauthorized: a valid 'Authorization: Bearer <key>' header is required");
                }
                if (stopping) throw EngineErrors.shuttingDown();
                h.handle(req, res);
            } catch (ApiException e) {
                if (!res.isSent()) {
                    if (e.closeConnection()) res.header(HeaderValues.CONNECTION_CLOSE);
                    Http.sendError(res, e.status(), e.getMessage(), e.param());
                }
            } catch (RuntimeException e) {
                // The exception's text describes the server's insides: the operator's log gets it, the client does not.
                LOG.log(
                        System.Logger.Level.ERROR,
                        "request " + req.prologue().method() + " " + req.path().path() + " failed",
                        e);
                if (!res.isSent()) Http.sendError(res, 500, "Internal server error", null);
            } finally {
                synchronized (handlersLock) {
                    if (--handling == 0) handlersLock.notifyAll();
                }
            }
        };
    }

    private void metrics(ServerRequest req, ServerResponse res) {
        List<String> names = req.query().all("name[]", List::of);
        Scrape s = metrics.scrape(
                new LinkedHashSet<>(names),
                req.headers().first(HeaderNames.ACCEPT).orElse(null));
        res.header(HeaderNames.CONTENT_TYPE, s.contentType());
        res.contentLength(s.size());
        // Streams the page's parts without joining them into one array (1.3 MB at 1000 adapters).
        try (var out = res.outputStream()) {
            s.writeTo(out);
        } catch (IOException e) {
            // The scraper went away; nothing to answer.
        }
    }

    private void models(ServerRequest req, ServerResponse res) {
        long created = System.currentTimeMillis() / 1000;
        ObjectNode list = Http.JSON.createObjectNode();
        list.put("object", "list");
        ArrayNode data = list.putArray("data");
        String base = engine.config().servedModelName();
        ObjectNode b = card(base, created, engine.model().source(), null);
        b.put("max_model_len", engine.config().maxModelLen());
        data.add(b);
        for (RegisteredAdapter a : engine.adapters()) {
            data.add(card(a.name(), created, a.spec().path().toString(), base).putNull("max_model_len"));
        }
        Http.sendJson(res, list);
    }

    private static ObjectNode card(String id, long created, String root, String parent) {
        ObjectNode c = Http.JSON.createObjectNode();
        c.put("id", id);
        c.put("object", "model");
        c.put("created", created);
        c.put("owned_by", "patchbay");
        c.put("root", root);
        if (parent == null) c.putNull("parent");
        else c.put("parent", parent);
        c.putArray("permission");
        return c;
    }

    /** The adapter a request's {@code model} names; loads it through the resolver directory when allowed. */
    private String adapterFor(String model) {
        return switch (engine.resolve(model)) {
            case BASE_MODEL -> null;
            case ADAPTER -> model;
            case UNKNOWN -> {
                if (loadThroughResolver(model)) yield model;
                throw new ApiException(404, ModelTarget.unknownModelMessage(model), "model");
            }
        };
    }

    /** Loads {@code model} from the resolver directory; false when nothing is there, API errors for a bad one. */
    private boolean loadThroughResolver(String model) {
        CompletableFuture<?> load;
        try {
            load = engine.adapterRegistry().resolve(model);
        } catch (AdapterException e) {
            throw EngineErrors.of(e);
        }
        if (load == null) return false;
        EngineErrors.awaitLoad(model, load);
        return true;
    }

    public int port() {
        return web.port();
    }

    public Engine engine() {
        return engine;
    }

    public EngineMetrics metrics() {
        return metrics;
    }

    /** Stops taking requests (503), lets those in flight finish for up to {@code grace}, then stops. */
    public void stopGracefully(Duration grace) {
        stopping = true;
        try {
            engine.drain(grace);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // Streams flush their last events after the engine finishes: wait for every handler to return.
        long deadline = System.nanoTime() + grace.toNanos();
        synchronized (handlersLock) {
            try {
                long left;
                while (handling > 0 && (left = deadline - System.nanoTime()) > 0) {
                    handlersLock.wait(Math.max(1, left / 1_000_000));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        stopStatsLogging();
        web.stop();
        engine.close();
    }

    public void stop() {
        stopping = true;
        stopStatsLogging();
        web.stop();
        engine.close();
    }

    private void stopStatsLogging() {
        if (statsLogging != null) statsLogging.shutdownNow();
    }

    void printWelcome(PrintStream out) {
        String host = options.host().equals("0.0.0.0") ? "localhost" : options.host();
        String url = "http://" + host + ":" + port();
        String auth = options.apiKey() == null ? "" : " -H 'Authorization: Bearer " + "$KEY'";
        out.println("Patchbay " + VERSION + " serving " + engine.config().servedModelName() + " ("
                + engine.model().source() + ") on " + url);
        out.println("KV cache: " + engine.config().numKvBlocks() + " blocks of "
                + engine.config().blockSize() + " tokens"
                + (engine.model().executor().kvCacheBlocks().isPresent() ? "" : " (simulated, no memory held)"));
        if (engine.config().enableLora()) {
            out.println("LoRA: max_loras=" + engine.config().maxLoras() + " max_cpu_loras="
                    + engine.config().maxCpuLoras() + ", adapters: "
                    + engine.adapters().stream().map(RegisteredAdapter::name).toList());
        }
        String model = staticAdapters.isEmpty()
                ? engine.config().servedModelName()
                : staticAdapters.get(0).name();
        out.println("Try:");
        out.println("  curl -s " + url + "/v1/models" + auth);
        out.println("  curl -s " + url + "/v1/completions" + auth + " -H 'Content-Type: application/json' \\");
        out.println("       -d '{\"model\": \"" + model + "\", \"prompt\": \"Hello\", \"max_tokens\": 16}'");
        out.println("  curl -s " + url + "/metrics | grep lora");
    }
}
