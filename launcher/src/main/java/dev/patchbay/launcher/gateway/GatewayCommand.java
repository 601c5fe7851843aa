package dev.patchbay.launcher.gateway;

import dev.patchbay.launcher.field.FieldTools;
import dev.patchbay.router.Router;
import dev.patchbay.router.RouterOptions;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointSource;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code patchbay gateway}: the gateway path on one machine, without Kubernetes. Envoy takes the requests and, for
 * each, asks Patchbay's picker (the router's ext_proc face, in this process) where it goes, as a Gateway with an
 * InferencePool does; Envoy runs {@code deploy/envoy/envoy.yaml} with these addresses filled in.
 */
@Command(
        name = "gateway",
        mixinStandardHelpOptions = true,
        description = "Run Envoy with Patchbay's endpoint picker in front of model servers: the Gateway API Inference "
                + "Extension's gateway path on one machine.")
public final class GatewayCommand implements Callable<Integer> {
    /**
     * The endpoints the picker names after its first choice: a request a server refused for want of a slot is tried
     * on two more before the last takes it whatever it finds.
     */
    public static final int DEFAULT_FALLBACKS = 2;

    @Option(
            names = "--endpoints",
            split = ",",
            paramLabel = "HOST:PORT",
            required = true,
            description = "Model servers, comma-separated. Names are resolved once, at start: Envoy routes to IPs.")
    List<String> endpoints;

    @Option(
            names = "--port",
            defaultValue = "8081",
            description = "Envoy's port for clients (default ${DEFAULT-VALUE}).")
    int port;

    @Option(
            names = "--host",
            defaultValue = "0.0.0.0",
            description = "Envoy's address for clients (default ${DEFAULT-VALUE}).")
    String host;

    @Option(
            names = "--failure-mode",
            defaultValue = "FailOpen",
            paramLabel = "FailOpen|FailClose",
            description = "While the picker does not answer: FailOpen sends requests round robin over the servers, "
                    + "FailClose answers 503 (default ${DEFAULT-VALUE}, as the Helm chart's InferencePool).")
    String failureMode;

    @Option(
            names = "--ext-proc-port",
            defaultValue = "9002",
            description = "The picker's ext_proc port, on 127.0.0.1 (default ${DEFAULT-VALUE}).")
    int extProcPort;

    @Option(
            names = "--grpc-health-port",
            defaultValue = "9003",
            description = "The picker's gRPC health port, on 127.0.0.1 (default ${DEFAULT-VALUE}).")
    int healthPort;

    @Option(
            names = "--router-port",
            defaultValue = "8080",
            description =
                    "The router's HTTP port on 127.0.0.1: its /metrics, and the reverse proxy (default ${DEFAULT-VALUE}).")
    int routerPort;

    @Option(
            names = "--admin-port",
            defaultValue = "19000",
            description = "Envoy's admin interface, on 127.0.0.1 (default ${DEFAULT-VALUE}).")
    int adminPort;

    @Option(
            names = "--ext-proc-fallbacks",
            paramLabel = "N",
            description = "Endpoints the picker names after its first choice, which Envoy tries in turn while "
                    + "Patchbay servers refuse the request for want of a batch slot; at most Envoy's retries in "
                    + "deploy/envoy/envoy.yaml; 0 names one (default: " + DEFAULT_FALLBACKS + ").")
    int fallbacks = DEFAULT_FALLBACKS;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "The router's JSON configuration (as `route --config`).")
    Path config;

    @Option(
            names = "--envoy",
            paramLabel = "PATH",
            description = "The Envoy binary (default: $PATCHBAY_ENVOY, which ./patchbay sets to the one "
                    + "scripts/third-party.sh installs, else envoy in $PATCHBAY_TOOLS, the checkout's .patchbay/bin "
                    + "or on PATH).")
    Path envoy;

    @Option(
            names = "--envoy-log-level",
            defaultValue = "warn",
            description = "Envoy's log level (default ${DEFAULT-VALUE}).")
    String envoyLogLevel;

    @Override
    public Integer call() throws Exception {
        EnvoyConfig.FailureMode mode;
        List<Endpoint> pool;
        try {
            mode = EnvoyConfig.FailureMode.parse(failureMode);
            pool = resolve(endpoints);
            EnvoyConfig.checkFallbacks(fallbacks);
        } catch (IllegalArgumentException | UnknownHostException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
        RouterConfig routerConfig = config == null ? RouterConfig.DEFAULT : RouterConfig.read(config);
        RouterOptions options = RouterOptions.builder(EndpointSource.of(pool))
                .port(routerPort)
                .config(routerConfig)
                .extProcPort(extProcPort)
                .healthPort(healthPort)
                .extProcFallbacks(fallbacks)
                .build();
        Router router = new Router(options).start();
        Path configFile = Files.createTempFile("patchbay-envoy", ".yaml");
        EnvoyProcess envoyProcess;
        try {
            Files.writeString(
                    configFile,
                    EnvoyConfig.render(new EnvoyConfig.Gateway(
                            host,
                            port,
                            adminPort,
                            new Endpoint("127.0.0.1", router.extProcPort()),
                            router.healthPort(),
                            mode,
                            pool)));
            envoyProcess = EnvoyProcess.start(envoyBinary(), configFile, null, envoyLogLevel);
        } catch (IOException | RuntimeException e) {
            router.stop();
            Files.deleteIfExists(configFile);
            throw e;
        }
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            try {
                                envoyProcess.close();
                            } catch (InterruptedException ignored) {
                                Thread.currentThread().interrupt();
                            }
                            router.stop();
                            try {
                                Files.deleteIfExists(configFile);
                            } catch (IOException ignored) {
                                // a temporary file left behind
                            }
                        },
                        "patchbay-gateway-shutdown"));
        System.err.println("patchbay gateway listening on http://" + host + ":" + envoyProcess.listenerPort("gateway")
                + " (Envoy " + mode.inferencePoolName() + ", picker ext_proc on 127.0.0.1:" + router.extProcPort()
                + ", router metrics on http://127.0.0.1:" + router.port() + "/metrics, profile "
                + router.picker().name() + ")");
        return envoyProcess.process().waitFor() == 0 ? 0 : 1;
    }

    /** Envoy's static clusters and ORIGINAL_DST take IP literals, so the picker must name servers by IP too. */
    static List<Endpoint> resolve(List<String> endpoints) throws UnknownHostException {
        List<Endpoint> resolved = new ArrayList<>();
        for (String text : endpoints) {
            Endpoint named = Endpoint.parse(text);
            Endpoint byIp = new Endpoint(InetAddress.getByName(named.host()).getHostAddress(), named.port());
            if (!resolved.contains(byIp)) {
                resolved.add(byIp);
            }
        }
        return resolved;
    }

    private Path envoyBinary() {
        if (envoy != null) {
            return envoy;
        }
        String fromEnvironment = System.getenv("PATCHBAY_ENVOY");
        if (fromEnvironment != null && !fromEnvironment.isBlank() && Files.isExecutable(Path.of(fromEnvironment))) {
            return Path.of(fromEnvironment);
        }
        return FieldTools.find("envoy")
                .orElseThrow(
                        () -> new CommandLine.ParameterException(
                                new CommandLine(this),
                                "no Envoy found: run scripts/third-party.sh python (./patchbay gateway does), or give --envoy"));
    }
}
