package dev.patchbay.router.extproc;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC server for the external processor, with the health services the gateway's endpoint picker has:
 * {@code liveness}, {@code readiness} and the processor's own name, all serving while it runs.
 */
public final class ExtProcServer implements AutoCloseable {
    static final long SHUTDOWN_GRACE_SECONDS = 10;
    static final String[] HEALTH_SERVICES = {"", "liveness", "readiness", ExternalProcessorGrpc.SERVICE_NAME};

    private final Server server;
    private final HealthStatusManager health;
    private final ExecutorService executor;

    private ExtProcServer(Server server, HealthStatusManager health, ExecutorService executor) {
        this.server = server;
        this.health = health;
        this.executor = executor;
    }

    /** Listens on {@code host:port} (0: a free port). */
    public static ExtProcServer start(String host, int port, ExtProcService service) throws IOException {
        HealthStatusManager health = new HealthStatusManager();
        ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
                .executor(executor)
                // A whole buffered body comes as one message: room for the largest the stream accepts (then 413).
                .maxInboundMessageSize(ExtProcStream.MAX_BODY_BYTES + 1024 * 1024)
                // A half-open connection would hold its streams, their bodies and their prompts in the tally forever.
                .keepAliveTime(1, TimeUnit.MINUTES)
                .keepAliveTimeout(20, TimeUnit.SECONDS)
                .addService(service)
                .addService(health.getHealthService())
                .build();
        try {
            server.start();
        } catch (IOException e) {
            executor.close();
            throw e;
        }
        for (String name : HEALTH_SERVICES) {
            health.setStatus(name, ServingStatus.SERVING);
        }
        return new ExtProcServer(server, health, executor);
    }

    public int port() {
        return server.getPort();
    }

    /**
     * Health says not serving, no new streams are taken, and open ones (each an HTTP exchange, a generation perhaps)
     * get {@link #SHUTDOWN_GRACE_SECONDS} to finish.
     */
    @Override
    public void close() {
        health.enterTerminalState();
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
