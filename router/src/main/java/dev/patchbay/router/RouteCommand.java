package dev.patchbay.router;

import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointSource;
import dev.patchbay.router.pool.EndpointsFile;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code patchbay route}: runs the standalone router until the process is stopped. */
@Command(
        name = "route",
        mixinStandardHelpOptions = true,
        description = "Route OpenAI requests over a pool of model servers, keeping LoRA adapters where they live.")
public final class RouteCommand implements Callable<Integer> {
    @Option(
            names = "--endpoints",
            split = ",",
            paramLabel = "HOST:PORT",
            description = "Model servers, comma-separated.")
    List<String> endpoints;

    @Option(
            names = "--endpoints-file",
            paramLabel = "FILE",
            description = "File listing model servers (host:port per line or comma-separated; # comments); "
                    + "re-read when it changes.")
    Path endpointsFile;

    @Option(names = "--port", defaultValue = "8080", description = "Port to listen on (default ${DEFAULT-VALUE}).")
    int port;

    @Option(
            names = "--host",
            defaultValue = "0.0.0.0",
            description = "Address to listen on (default ${DEFAULT-VALUE}).")
    String host;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "JSON file: profile, profile file, weights, thresholds, rewrites.")
    Path config;

    @Option(
            names = "--scrape-interval",
            defaultValue = "50ms",
            converter = DurationOption.class,
            description = "How often to read every server's metrics (default ${DEFAULT-VALUE}).")
    Duration scrapeInterval;

    @Option(
            names = "--staleness",
            defaultValue = "200ms",
            converter = DurationOption.class,
            description =
                    "Age after which a server's data is stale and it gets no requests (default ${DEFAULT-VALUE}).")
    Duration staleness;

    @Option(
            names = "--max-staleness",
            paramLabel = "DURATION",
            converter = DurationOption.class,
            description = "When no server's data is fresh (a busy host slows every scrape), route on the freshest "
                    + "last good data no older than this, rather than refuse; servers whose scrape failed are still "
                    + "left out. At least --staleness (default 5s, or --staleness if longer).")
    Duration maxStaleness;

    @Option(
            names = "--served-models-interval",
            paramLabel = "DURATION",
            converter = DurationOption.class,
            description = "How often to read every server's /v1/models: a model some server lists goes only to the "
                    + "servers that list it (and those whose list is not known); 0s reads none. Default: "
                    + "servedModelsInterval in --config, else 1s.")
    Duration servedModelsInterval;

    @Option(
            names = "--ext-proc-port",
            paramLabel = "PORT",
            description = "Also serve Envoy's external processor (gRPC, the Endpoint Picker Protocol) on this port; "
                    + "the gateway's endpoint picker uses 9002. Off unless given.")
    Integer extProcPort;

    @Option(
            names = "--grpc-health-port",
            paramLabel = "PORT",
            description = "Also serve the external processor's gRPC health services (liveness, readiness) on a port "
                    + "of their own, as the gateway's endpoint picker does on 9003; they are on the ext_proc port "
                    + "too. Needs --ext-proc-port. Off unless given.")
    Integer grpcHealthPort;

    @Option(
            names = "--ext-proc-fallbacks",
            paramLabel = "N",
            description = "Name N more endpoints after the first choice in the answer to Envoy (the protocol's "
                    + "fallback list, best first), for Envoy to retry on; a request that may wait for a slot is then "
                    + "refused by a Patchbay server without one on every attempt but the last, and Envoy tries the next. "
                    + "Needs Envoy's override_host load balancing with retries, as deploy/envoy/envoy.yaml has it; "
                    + "Envoy's ORIGINAL_DST cluster fails a request whose header names more than one. Default: 0.")
    int extProcFallbacks;

    @Option(
            names = "--placement",
            paramLabel = "on|off",
            description = "Place adapters across the servers: load an adapter's homes ahead of demand and release "
                    + "surplus copies through the servers' /v1/load_lora_adapter and /v1/unload_lora_adapter "
                    + "(docs/placement.md). Default: placement.enabled in --config, else off.")
    String placement;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final CountDownLatch stopped = new CountDownLatch(1);

    @Override
    public Integer call() throws Exception {
        Router router = createRouter();
        try {
            router.start();
        } catch (RuntimeException e) {
            router.stop();
            commandLine().getErr().println("cannot start the router on " + host + ":" + port + ": " + e.getMessage());
            return 1;
        }
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            router.stop();
                            stopped.countDown();
                        },
                        "patchbay-router-shutdown"));
        System.err.println("patchbay router listening on " + host + ":" + router.port()
                + (extProcPort == null ? "" : ", ext_proc (gRPC) on " + host + ":" + router.extProcPort())
                + (grpcHealthPort == null ? "" : ", gRPC health on " + host + ":" + router.healthPort())
                + " (profile " + router.picker().name() + ")");
        stopped.await();
        return 0;
    }

    /** Builds the router the options describe, without starting it. */
    public Router createRouter() throws Exception {
        return new Router(options());
    }

    RouterOptions options() throws Exception {
        if ((endpoints == null || endpoints.isEmpty()) == (endpointsFile == null)) {
            throw new CommandLine.ParameterException(
                    commandLine(), "give exactly one of --endpoints and --endpoints-file");
        }
        EndpointSource source;
        try {
            source = endpointsFile != null
                    ? new EndpointsFile(endpointsFile)
                    : EndpointSource.of(
                            endpoints.stream().map(Endpoint::parse).distinct().toList());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(commandLine(), e.getMessage());
        }
        RouterConfig routerConfig;
        try {
            routerConfig = config == null ? RouterConfig.DEFAULT : RouterConfig.read(config);
        } catch (IOException e) {
            throw new CommandLine.ParameterException(commandLine(), e.getMessage());
        }
        if (placement != null) {
            if (!placement.equals("on") && !placement.equals("off")) {
                throw new CommandLine.ParameterException(
                        commandLine(), "--placement must be on or off, got '" + placement + "'");
            }
            routerConfig = routerConfig.withPlacementOn(placement.equals("on"));
        }
        try {
            return RouterOptions.builder(source)
                    .host(host)
                    .port(port)
                    .config(routerConfig)
                    .scrapeInterval(scrapeInterval)
                    .staleness(staleness)
                    .maxStaleness(maxStaleness)
                    .extProcPort(extProcPort == null ? RouterOptions.NO_EXT_PROC : extProcPort)
                    .healthPort(grpcHealthPort == null ? RouterOptions.NO_EXT_PROC : grpcHealthPort)
                    .servedModelsInterval(servedModelsInterval)
                    .extProcFallbacks(extProcFallbacks)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(commandLine(), e.getMessage());
        }
    }

    private CommandLine commandLine() {
        return spec != null ? spec.commandLine() : new CommandLine(this);
    }
}
