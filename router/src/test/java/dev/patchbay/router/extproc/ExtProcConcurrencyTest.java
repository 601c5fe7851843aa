package dev.patchbay.router.extproc;

import static dev.patchbay.router.extproc.Answered.destination;
import static dev.patchbay.router.extproc.EnvoyFrames.BUFFERED;
import static dev.patchbay.router.extproc.EnvoyFrames.FULL_DUPLEX;
import static dev.patchbay.router.extproc.EnvoyFrames.chunks;
import static dev.patchbay.router.extproc.EnvoyFrames.responseBody;
import static dev.patchbay.router.extproc.EnvoyFrames.responseHeaders;
import static dev.patchbay.router.extproc.EnvoyFrames.whole;
import static dev.patchbay.router.extproc.EnvoyFrames.withSubset;
import static dev.patchbay.router.proxy.FakeModelServer.page;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.proxy.FakeModelServer;
import dev.patchbay.testkit.Await;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Many streams at once, as an Envoy with many requests in flight holds them: each is answered for itself. */
class ExtProcConcurrencyTest {
    private static final int STREAMS = 120;

    @AutoClose
    private final ExtProcRoute route = new ExtProcRoute();

    @Test
    void concurrentStreamsEachGetTheirOwnAnswerAndAreBookedWhereTheyWereServed() throws Exception {
        List<FakeModelServer> servers = List.of(
                route.server("a", page(0, 0.1, "sql")),
                route.server("b", page(0, 0.1, "sql")),
                route.server("c", page(0, 0.1, "sql")));
        route.start(null);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        try (ExecutorService envoy = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < STREAMS; i++) {
                // Each stream hints its own server and sends its own body: an answer meant for another stream,
                // or a body mixed with another's, shows as a wrong destination or a wrong body.
                FakeModelServer hinted = servers.get(i % servers.size());
                EnvoyFrames mode = i % 2 == 0 ? FULL_DUPLEX : BUFFERED;
                byte[] body = ("{\"model\":\"sql\",\"prompt\":\"ünïcödé, stream " + i + " " + "word ".repeat(i)
                                + "\",\"max_tokens\":4}")
                        .getBytes(UTF_8);
                done.add(envoy.submit(() -> {
                    go.await();
                    oneRequest(mode, body, hinted);
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get(Await.DEFAULT_DEADLINE.toSeconds(), TimeUnit.SECONDS);
            }
        }
        for (FakeModelServer server : servers) {
            assertThat(route.picks(server)).as(server.address()).isEqualTo(STREAMS / servers.size());
            assertThat(route.promptTokensInFlight(server)).isZero();
        }
    }

    private void oneRequest(EnvoyFrames mode, byte[] body, FakeModelServer hinted) throws InterruptedException {
        EnvoyStream stream = route.stream();
        ProcessingResponse decided;
        if (mode.fullDuplex()) {
            stream.send(withSubset(mode.post(body), hinted.address()));
            stream.send(chunks(body, 5, 12, 26)); // inside "model", inside "sql", inside "ü"
            decided = stream.next();
            assertThat(stream.streamedBody().toByteArray()).isEqualTo(body);
        } else {
            stream.exchange(withSubset(mode.post(body), hinted.address()));
            decided = stream.exchange(whole(body));
        }
        assertThat(destination(decided)).isEqualTo(hinted.address());
        stream.exchange(responseHeaders(200, hinted.address()));
        stream.exchange(responseBody("{}", true));
        stream.complete();
        assertThat(stream.awaitEnd()).isEmpty();
    }
}
