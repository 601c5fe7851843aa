package dev.patchbay.router.extproc;

import dev.patchbay.router.RouteCommand;
import dev.patchbay.router.Router;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.proxy.FakeModelServer;
import dev.patchbay.testkit.Await;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine;

/**
 * {@code patchbay route --ext-proc-port 0} (the command, the router and its gRPC server) over fake model servers it
 * owns, with one gRPC channel to the external processor, as an Envoy holds one.
 */
final class ExtProcRoute implements AutoCloseable {
    private final List<FakeModelServer> servers = new ArrayList<>();
    private final List<Path> files = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();
    private Router router;
    private ManagedChannel channel;

    /** A fake model server showing {@code page}, closed with the route. */
    FakeModelServer server(String name, String page) throws IOException {
        FakeModelServer server = new FakeModelServer(name, page);
        servers.add(server);
        return server;
    }

    /** Routes over every server made so far with the given config file content (null: none); waits until all are ready. */
    ExtProcRoute start(String config) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--endpoints", servers.stream().map(FakeModelServer::address).collect(Collectors.joining(","))));
        if (config != null) {
            args.add("--config");
            args.add(file("router", ".json", config).toString());
        }
        startWith(args.toArray(String[]::new));
        Await.until("every endpoint ready", () -> router.pool().readyStates().size() == servers.size());
        return this;
    }

    /** Runs {@code route} with {@code args} besides loopback, free ports and short scrape timings; waits for nothing. */
    ExtProcRoute startWith(String... args) throws Exception {
        List<String> given = List.of(args);
        List<String> all = new ArrayList<>(given);
        String[] defaults = {
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--ext-proc-port",
            "0",
            "--scrape-interval",
            "25ms",
            "--staleness",
            "500ms"
        };
        for (int i = 0; i < defaults.length; i += 2) {
            if (!given.contains(defaults[i])) { // an option given twice is an error: the test's own wins
                all.add(defaults[i]);
                all.add(defaults[i + 1]);
            }
        }
        RouteCommand command = new RouteCommand();
        new CommandLine(command).parseArgs(all.toArray(String[]::new));
        router = command.createRouter().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", router.extProcPort())
                .usePlaintext()
                .build();
        return this;
    }

    /** A temporary file with {@code content}, deleted with the route. */
    Path file(String prefix, String suffix, String content) throws IOException {
        Path path = Files.createTempFile(prefix, suffix);
        files.add(path);
        Files.writeString(path, content);
        return path;
    }

    Router router() {
        return router;
    }

    EnvoyStream stream() {
        return new EnvoyStream(channel);
    }

    ServingStatus health(String service) {
        return HealthGrpc.newBlockingStub(channel)
                .check(HealthCheckRequest.newBuilder().setService(service).build())
                .getStatus();
    }

    long promptTokensInFlight(FakeModelServer server) {
        return router.pool().promptTokensInFlight(Endpoint.parse(server.address()));
    }

    /** {@code patchbay_router_picks_total} for the server, from the router's {@code /metrics}. */
    double picks(FakeModelServer server) throws IOException, InterruptedException {
        return metric("patchbay_router_picks_total{endpoint=\"" + server.address() + "\"}");
    }

    /** One series' value on the router's {@code /metrics} ({@code name{labels}}), 0 when it is not there. */
    double metric(String series) throws IOException, InterruptedException {
        String page = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + router.port() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        for (String line : page.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).trim());
            }
        }
        return 0;
    }

    @Override
    public void close() throws IOException {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (router != null) {
            router.stop();
        }
        servers.forEach(FakeModelServer::close);
        http.close();
        for (Path path : files) {
            Files.deleteIfExists(path);
        }
    }
}
