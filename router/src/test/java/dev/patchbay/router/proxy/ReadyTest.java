package dev.patchbay.router.proxy;

import static dev.patchbay.router.proxy.FakeModelServer.page;
import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The HTTP face's readiness ({@code GET /ready}), as the gRPC face's: ready once every server's first scrape ended. */
class ReadyTest {

    @Test
    void readyOnceEveryServersFirstScrapeHasEndedAndStillWhenNoServerIsReady() throws Exception {
        try (FakeModelServer a = new FakeModelServer("a", page(0, 0.1, "sql"))) {
            CountDownLatch firstScrape = new CountDownLatch(1);
            a.metricsGate = firstScrape;
            // Long staleness: the held scrape must not time out (a timed-out scrape is a scrape that ended).
            try (RouterHarness router = new RouterHarness(
                    RouterConfig.DEFAULT, Duration.ofMillis(25), Duration.ofSeconds(30), List.of(a.address()))) {
                assertThat(router.get("/health").statusCode())
                        .as("alive at once")
                        .isEqualTo(200);
                assertThat(router.get("/ready").statusCode())
                        .as("its server's first scrape is held")
                        .isEqualTo(503);

                firstScrape.countDown();
                Await.until("ready", () -> status(router, "/ready") == 200);
                assertThat(router.get("/ready").body()).isEqualTo("ready");

                // A fleet with no ready server is a fact about the fleet: requests get 503, the router stays ready.
                a.kill();
                router.await(
                        "the dead server goes",
                        () -> router.router.pool().readyStates().isEmpty());
                assertThat(router.complete("sql").statusCode()).isEqualTo(503);
                assertThat(router.get("/ready").statusCode()).isEqualTo(200);
            }
        }
    }

    private static int status(RouterHarness router, String path) {
        try {
            return router.get(path).statusCode();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
