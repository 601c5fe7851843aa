package dev.patchbay.router.extproc;

import dev.patchbay.router.route.RequestLifecycle;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The gRPC server for the external processor, with the health services the gateway's endpoint picker has.
 * {@code liveness} serves while the process answers. {@code readiness}, the processor's own name and the empty
 * name (a load balancer's overall check) serve once the pool is synced, as the gateway's picker waits for its
 * datastore: the endpoint list read and every endpoint scraped once. They stay serving when no endpoint is ready,
 * since the protocol's answer to that is a 503 per request, from a picker the data plane can still reach. The same
 * health services can also have a port of their own (the gateway's picker serves them on 9003), for probes that
 * should not share the data plane's port.
 */
public final class ExtProcServer implements AutoCloseable {
    static final long SHUTDOWN_GRACE_SECONDS = 10;
    static final String LIVENESS = "liveness";
    static final String READINESS = "readiness";
    static final List<String> READY_SERVICES = List.of("", READINESS, ExternalProcessorGrpc.SERVICE_NAME);
    /** How often readiness is looked at until the pool is synced; a scrape round takes about as long. */
    private static final Duration READINESS_POLL = Duration.ofMillis(20);

    private final Server server;
    private final Server healthServer; // null without a health port of its own
    private final HealthStatusManager health;
    private final ExecutorService executor;
    private final Thread readinessWatch;

    private ExtProcServer(
            Server server,
            Server healthServer,
            HealthStatusManager health,
            ExecutorService executor,
            Thread readinessWatch) {
        this.server = server;
        this.healthServer = healthServer;
        this.health = health;
        this.executor = executor;
        this.readinessWatch = readinessWatch;
    }

    /**
     * Listens on {@code host:port} (0: a free port).
     *
     * @param healthPort a port for the health services alone (0: a free one), or -1 for none
     * @param synced     whether the pool is synced ({@link dev.patchbay.router.pool.EndpointPool#synced})
     */
    public static ExtProcServer start(
            String host, int port, int healthPort, ExtProcService service, BooleanSupplier synced) throws IOException {
        HealthStatusManager health = new HealthStatusManager();
        health.setStatus(LIVENESS, ServingStatus.SERVING);
        for (String name : READY_SERVICES) {
            health.setStatus(name, ServingStatus.NOT_SERVING);
        }
        ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
                .executor(executor)
                // A whole buffered body comes as one message: room for the largest the stream accepts (then 413).
                .maxInboundMessageSize(RequestLifecycle.MAX_BODY_BYTES + 1024 * 1024)
                // A half-open connection would hold its streams, their bodies and their prompts in the tally forever.
                .keepAliveTime(1, TimeUnit.MINUTES)
                .keepAliveTimeout(20, TimeUnit.SECONDS)
                .addService(service)
                .addService(health.getHealthService())
                .build();
        Server healthServer = healthPort < 0
                ? null
                : NettyServerBuilder.forAddress(new InetSocketAddress(host, healthPort))
                        .executor(executor)
                        .addService(health.getHealthService())
                        .build();
        try {
            server.start();
            if (healthServer != null) healthServer.start();
        } catch (IOException e) {
            server.shutdownNow();
            executor.close();
            throw e;
        }
        Thread watch = Thread.ofVirtual().name("patchbay-ext-proc-readiness").start(() -> {
            try {
                while (!synced.getAsBoolean()) {
                    Thread.sleep(READINESS_POLL);
                }
            } catch (InterruptedException closing) {
                return;
            }
            // Once synced, ready for good (until close): later changes are per-endpoint facts the picks handle.
            for (String name : READY_SERVICES) {
                health.setStatus(name, ServingStatus.SERVING);
            }
        });
        return new ExtProcServer(server, healthServer, health, executor, watch);
    }

    public int port() {
        return server.getPort();
    }

    public boolean hasHealthPort() {
        return healthServer != null;
    }

    public int healthPort() {
        return healthServer.getPort();
    }

    /**
     * Health says not serving, no new streams are taken, and open ones (each an HTTP exchange, a generation perhaps)
     * get {@link #SHUTDOWN_GRACE_SECONDS} to finish.
     */
    @Override
    public void close() {
        readinessWatch.interrupt();
        health.enterTerminalState(); // later setStatus calls are ignored, so the watch cannot turn it back
        if (healthServer != null) healthServer.shutdownNow();
        server.shutdown();
        try {
            if (!server.awaitTermination(SHUTDOWN_GRACE_SECONDS, TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
        executor.shutdownNow();
    }
}
