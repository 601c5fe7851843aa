package dev.patchbay.router.extproc;

import static dev.patchbay.router.extproc.EnvoyFrames.BUFFERED;
import static dev.patchbay.router.extproc.EnvoyFrames.completion;
import static dev.patchbay.router.extproc.EnvoyFrames.whole;
import static dev.patchbay.router.proxy.FakeModelServer.page;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.router.RouteCommand;
import dev.patchbay.router.proxy.FakeModelServer;
import dev.patchbay.testkit.Await;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * gRPC health as the gateway's endpoint picker has it: {@code liveness} while the process answers; {@code readiness},
 * the processor's own name and the overall (empty) name once the pool is synced.
 */
class ExtProcHealthTest {
    private static final List<String> READY_NAMES = List.of("readiness", ExternalProcessorGrpc.SERVICE_NAME, "");

    @AutoClose
    private final ExtProcRoute route = new ExtProcRoute();

    private void assertReadiness(ServingStatus expected) {
        for (String name : READY_NAMES) {
            assertThat(route.health(name)).as("'" + name + "'").isEqualTo(expected);
        }
    }

    @Test
    void livenessServesAtOnceAndReadinessOnceTheListIsReadAndEveryEndpointScraped() throws Exception {
        FakeModelServer a = route.server("a", page(0, 0.1, "sql"));
        CountDownLatch firstScrape = new CountDownLatch(1);
        a.metricsGate = firstScrape;
        Path list = route.file("pool", ".txt", "");
        Files.delete(list); // the endpoints file is not there yet
        // Long staleness: the held scrape must not time out (a timed-out scrape is a scrape that ended).
        route.startWith("--endpoints-file", list.toString(), "--staleness", "30s");

        assertThat(route.health("liveness")).isEqualTo(ServingStatus.SERVING);
        assertReadiness(ServingStatus.NOT_SERVING);

        Files.writeString(list, a.address() + "\n");
        Await.until("the list is read", () -> route.router().pool().statuses().size() == 1);
        assertReadiness(ServingStatus.NOT_SERVING); // its endpoint's first scrape is held

        firstScrape.countDown();
        Await.until("readiness serves", () -> route.health("readiness") == ServingStatus.SERVING);
        assertReadiness(ServingStatus.SERVING);
        assertThat(route.health("liveness")).isEqualTo(ServingStatus.SERVING);
    }

    @Test
    void readinessStaysServingWhenNoEndpointIsReadyAndRequestsGet503() throws Exception {
        FakeModelServer a = route.server("a", page(0, 0.1, "sql"));
        route.start(null);
        Await.until("readiness serves", () -> route.health("readiness") == ServingStatus.SERVING);

        a.kill();
        Await.until(
                "the dead server goes",
                () -> route.router().pool().readyStates().isEmpty());
        assertReadiness(ServingStatus.SERVING);
        byte[] body = completion("sql");
        EnvoyStream stream = route.stream();
        stream.exchange(BUFFERED.post(body));
        assertThat(Answered.status(stream.exchange(whole(body))))
                .as("the protocol's answer: 503 per request")
                .isEqualTo(503);
    }

    @Test
    void aFirstScrapeThatFailsStillEndsTheSync() throws Exception {
        FakeModelServer dead = route.server("dead", page(0, 0.1));
        dead.kill(); // nothing listens: the first scrape is refused
        route.startWith("--endpoints", dead.address());
        Await.until("readiness serves", () -> route.health("readiness") == ServingStatus.SERVING);
        assertThat(route.router().pool().statuses().getFirst().lastError())
                .as("synced on a failed scrape")
                .isNotNull();
        assertThat(route.router().pool().readyStates()).isEmpty();
    }

    @Test
    void aServiceItDoesNotHaveIsNotFound() throws Exception {
        route.server("a", page(0, 0.1));
        route.start(null);
        assertThatThrownBy(() -> route.health("no.such.Service"))
                .isInstanceOf(StatusRuntimeException.class)
                .extracting(e -> ((StatusRuntimeException) e).getStatus().getCode())
                .isEqualTo(Status.Code.NOT_FOUND);
    }

    @Test
    void theHealthServicesAlsoAnswerOnAPortOfTheirOwn() throws Exception {
        FakeModelServer a = route.server("a", page(0, 0.1, "sql"));
        route.startWith("--endpoints", a.address(), "--grpc-health-port", "0");
        int healthPort = route.router().healthPort();
        assertThat(healthPort).isNotEqualTo(route.router().extProcPort());
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", healthPort)
                .usePlaintext()
                .build();
        try {
            HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);
            Await.until(
                    "readiness serves on the health port", () -> status(health, "readiness") == ServingStatus.SERVING);
            assertThat(status(health, "liveness")).isEqualTo(ServingStatus.SERVING);
            assertThat(status(health, ExternalProcessorGrpc.SERVICE_NAME)).isEqualTo(ServingStatus.SERVING);
            assertThat(route.health("readiness"))
                    .as("and still on the ext_proc port")
                    .isEqualTo(ServingStatus.SERVING);
            // Only health lives there: the processor itself is not served on that port.
            CompletableFuture<Status> ended = new CompletableFuture<>();
            ExternalProcessorGrpc.newStub(channel)
                    .process(new StreamObserver<>() {
                        @Override
                        public void onNext(ProcessingResponse response) {}

                        @Override
                        public void onError(Throwable t) {
                            ended.complete(Status.fromThrowable(t));
                        }

                        @Override
                        public void onCompleted() {
                            ended.complete(Status.OK);
                        }
                    })
                    .onCompleted();
            assertThat(ended.get(60, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void aHealthPortWithoutTheExternalProcessorIsRefused() {
        RouteCommand command = new RouteCommand();
        CommandLine cli = new CommandLine(command);
        cli.parseArgs("--endpoints", "127.0.0.1:1", "--grpc-health-port", "9003");
        assertThatThrownBy(command::createRouter)
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("--ext-proc-port");
    }

    private static ServingStatus status(HealthGrpc.HealthBlockingStub health, String service) {
        return health.check(HealthCheckRequest.newBuilder().setService(service).build())
                .getStatus();
    }
}
