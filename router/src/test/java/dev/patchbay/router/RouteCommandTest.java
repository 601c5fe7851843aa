package dev.patchbay.router;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.pick.OwnPicksCounter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class RouteCommandTest {
    private static int run(StringWriter err, String... args) {
        CommandLine cli = new CommandLine(new RouteCommand());
        cli.setErr(new PrintWriter(err));
        cli.setOut(new PrintWriter(new StringWriter()));
        return cli.execute(args);
    }

    @Test
    void badArgumentsExitWithUsageErrors() throws Exception {
        StringWriter err = new StringWriter();
        assertThat(run(err, "--bogus")).isEqualTo(2);
        assertThat(run(err)).isEqualTo(2);
        assertThat(err.toString()).contains("give exactly one of --endpoints and --endpoints-file");
        assertThat(run(err, "--endpoints", "nohost")).isEqualTo(2);
        assertThat(run(err, "--endpoints", "127.0.0.1:1", "--scrape-interval", "soon"))
                .isEqualTo(2);
        StringWriter bare = new StringWriter();
        assertThat(run(bare, "--endpoints", "127.0.0.1:1", "--scrape-interval", "50"))
                .isEqualTo(2);
        assertThat(bare.toString()).contains("'50' has no unit; use a unit: e.g. 50ms");
        assertThat(run(err, "--endpoints", "127.0.0.1:1", "--scrape-interval", "500ms", "--staleness", "100ms"))
                .isEqualTo(2);
        assertThat(run(err, "--endpoints", "127.0.0.1:1", "--ext-proc-port", "70000"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("ext_proc port must be 0..65535");
        assertThat(run(err, "--endpoints", "127.0.0.1:1", "--placement", "maybe"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--placement must be on or off, got 'maybe'");
        Path config = Files.createTempFile("router", ".json");
        try {
            Files.writeString(config, "{\"profile\": \"fastest\"}");
            assertThat(run(err, "--endpoints", "127.0.0.1:1", "--config", config.toString()))
                    .isEqualTo(2);
            assertThat(err.toString()).contains("unknown profile");
        } finally {
            Files.deleteIfExists(config);
        }
        assertThat(run(new StringWriter(), "--help")).isZero();
    }

    @Test
    void optionsBuildARouterThatStartsAndStops() throws Exception {
        RouteCommand command = new RouteCommand();
        new CommandLine(command)
                .parseArgs(
                        "--endpoints",
                        "127.0.0.1:1,127.0.0.1:2",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        "0",
                        "--scrape-interval",
                        "20ms",
                        "--staleness",
                        "1s");
        RouterOptions options = command.options();
        assertThat(options.extProcPort())
                .as("no external processor unless asked")
                .isEqualTo(RouterOptions.NO_EXT_PROC);
        assertThat(options.scrapeInterval()).isEqualTo(Duration.ofMillis(20));
        assertThat(options.staleness()).isEqualTo(Duration.ofSeconds(1));
        assertThat(options.endpoints().current()).hasSize(2);
        try (Router router = command.createRouter().start();
                HttpClient client = HttpClient.newHttpClient()) {
            assertThat(router.port()).isPositive();
            HttpResponse<String> health = client.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + router.port() + "/health"))
                            .timeout(Duration.ofSeconds(5))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
        }
    }

    @Test
    void extProcPortStartsTheGrpcFaceBesideTheHttpOne() throws Exception {
        RouteCommand command = new RouteCommand();
        new CommandLine(command)
                .parseArgs("--endpoints", "127.0.0.1:1", "--host", "127.0.0.1", "--port", "0", "--ext-proc-port", "0");
        try (Router router = command.createRouter().start()) {
            assertThat(router.extProcPort()).isPositive().isNotEqualTo(router.port());
            try (Socket grpc = new Socket(InetAddress.getLoopbackAddress(), router.extProcPort())) {
                assertThat(grpc.isConnected()).isTrue();
            }
        }
    }

    @Test
    void extProcPortInUseFailsWithAClearMessage() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            StringWriter err = new StringWriter();
            assertThat(run(
                            err,
                            "--endpoints",
                            "127.0.0.1:1",
                            "--host",
                            "127.0.0.1",
                            "--port",
                            "0",
                            "--ext-proc-port",
                            Integer.toString(taken.getLocalPort())))
                    .isEqualTo(1);
            assertThat(err.toString()).contains("cannot listen for ext_proc on 127.0.0.1:" + taken.getLocalPort());
        }
    }

    @Test
    void portInUseFailsWithAClearMessage() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            StringWriter err = new StringWriter();
            AtomicInteger exit = new AtomicInteger(-1);
            // daemon: if the command wrongly kept running, the test fails instead of hanging the build
            Thread runner = Thread.ofPlatform()
                    .daemon()
                    .start(() -> exit.set(run(
                            err,
                            "--endpoints",
                            "127.0.0.1:1",
                            "--host",
                            "127.0.0.1",
                            "--port",
                            Integer.toString(taken.getLocalPort()))));
            runner.join(Duration.ofSeconds(20));
            assertThat(exit.get()).isEqualTo(1);
            assertThat(err.toString()).contains("cannot listen on 127.0.0.1:" + taken.getLocalPort());
        }
    }

    @Test
    void defaultsMatchTheSpec() throws Exception {
        RouteCommand command = new RouteCommand();
        new CommandLine(command).parseArgs("--endpoints", "127.0.0.1:1");
        RouterOptions options = command.options();
        assertThat(options.port()).isEqualTo(8080);
        assertThat(options.scrapeInterval()).isEqualTo(RouterOptions.DEFAULT_SCRAPE_INTERVAL);
        assertThat(options.staleness()).isEqualTo(RouterOptions.DEFAULT_STALENESS);
        assertThat(options.config().profile()).isEqualTo("patchbay");
    }

    @Test
    void theServedModelsIntervalComesFromTheFlagElseTheConfigElseOneSecondAndZeroReadsNone() throws Exception {
        RouteCommand defaults = new RouteCommand();
        new CommandLine(defaults).parseArgs("--endpoints", "127.0.0.1:1");
        assertThat(defaults.options().servedModelsInterval())
                .isEqualTo(Duration.ofSeconds(1))
                .isEqualTo(RouterOptions.DEFAULT_SERVED_MODELS_INTERVAL);
        Path config = Files.createTempFile("router", ".json");
        try {
            Files.writeString(config, "{\"servedModelsInterval\": \"5s\"}");
            RouteCommand fromFile = new RouteCommand();
            new CommandLine(fromFile).parseArgs("--endpoints", "127.0.0.1:1", "--config", config.toString());
            assertThat(fromFile.options().servedModelsInterval()).isEqualTo(Duration.ofSeconds(5));
            RouteCommand flag = new RouteCommand();
            new CommandLine(flag)
                    .parseArgs(
                            "--endpoints",
                            "127.0.0.1:1",
                            "--config",
                            config.toString(),
                            "--served-models-interval",
                            "0s");
            assertThat(flag.options().servedModelsInterval())
                    .as("the flag wins")
                    .isZero();
        } finally {
            Files.deleteIfExists(config);
        }
        StringWriter err = new StringWriter();
        assertThat(run(err, "--endpoints", "127.0.0.1:1", "--served-models-interval", "2"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("'2' has no unit");
    }

    @Test
    void maxStalenessDefaultsToFiveSecondsOrTheStalenessAndMayNotBeShorterThanIt() throws Exception {
        RouteCommand defaults = new RouteCommand();
        new CommandLine(defaults).parseArgs("--endpoints", "127.0.0.1:1");
        assertThat(defaults.options().maxStaleness())
                .isEqualTo(Duration.ofSeconds(5))
                .isEqualTo(RouterOptions.DEFAULT_MAX_STALENESS);

        RouteCommand longStaleness = new RouteCommand();
        new CommandLine(longStaleness).parseArgs("--endpoints", "127.0.0.1:1", "--staleness", "8s");
        assertThat(longStaleness.options().maxStaleness())
                .as("raised to the staleness")
                .isEqualTo(Duration.ofSeconds(8));

        RouteCommand given = new RouteCommand();
        new CommandLine(given).parseArgs("--endpoints", "127.0.0.1:1", "--max-staleness", "750ms");
        assertThat(given.options().maxStaleness()).isEqualTo(Duration.ofMillis(750));

        StringWriter err = new StringWriter();
        assertThat(run(err, "--endpoints", "127.0.0.1:1", "--staleness", "1s", "--max-staleness", "500ms"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("max staleness (500 ms) must be at least the staleness (1000 ms)");
        assertThat(run(err, "--endpoints", "127.0.0.1:1", "--max-staleness", "5"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("'5' has no unit");

        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new RouteCommand());
        cli.setOut(new PrintWriter(out));
        assertThat(cli.execute("--help")).isZero();
        assertThat(out.toString()).contains("--max-staleness");
    }

    @Test
    void theConfigsProfileFileDefinesTheRoutersProfileAndABadOneStopsTheStart() throws Exception {
        Path dir = Files.createTempDirectory("route-profiles");
        try {
            Path profiles = dir.resolve("profiles.json");
            Files.writeString(profiles, """
                    {"apiVersion": "inference.networking.x-k8s.io/v1alpha1", "kind": "EndpointPickerConfig",
                     "plugins": [{"type": "queue-scorer", "parameters": {"minSpread": 2}}, {"type": "own-picks-counter"}],
                     "schedulingProfiles": [{"name": "mine", "plugins": [
                       {"pluginRef": "queue-scorer", "weight": 2}, {"pluginRef": "own-picks-counter"}]}]}
                    """);
            Path config = dir.resolve("router.json");
            Files.writeString(config, "{\"profileFile\": \"profiles.json\"}");
            RouteCommand command = new RouteCommand();
            new CommandLine(command)
                    .parseArgs(
                            "--endpoints",
                            "127.0.0.1:1",
                            "--host",
                            "127.0.0.1",
                            "--port",
                            "0",
                            "--config",
                            config.toString());
            try (Router router = command.createRouter()) {
                assertThat(router.picker().name()).isEqualTo("mine");
                assertThat(router.picker().preRequests())
                        .hasOnlyElementsOfType(OwnPicksCounter.class)
                        .hasSize(1);
            }
            Files.writeString(profiles, Files.readString(profiles).replace("\"weight\": 2", "\"weight\": -2"));
            StringWriter err = new StringWriter();
            assertThat(run(err, "--endpoints", "127.0.0.1:1", "--config", config.toString()))
                    .isEqualTo(2);
            assertThat(err.toString())
                    .contains(
                            "profile file " + profiles
                                    + ": profile 'mine', pluginRef 'queue-scorer': weight must be a finite number >= 0, got -2");
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }
}
