package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EndpointPoolTest {
    private static final String PAGE = "vllm:num_requests_waiting{model_name=\"m\"} 2\n";

    static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(5);
        }
    }

    private static List<Endpoint> endpoints(int count) {
        List<Endpoint> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            list.add(new Endpoint("127.0.0.1", 9000 + i));
        }
        return list;
    }

    @Test
    void promptTallyReachesThePickerAndEachRequestTakesBackOnlyItsOwnTokensOnce() throws Exception {
        List<Endpoint> list = endpoints(2);
        try (EndpointPool pool = new EndpointPool(EndpointSource.of(list), endpoint -> PAGE, Duration.ofMillis(20),
                Duration.ofSeconds(5), e -> { })) {
            pool.start();
            awaitTrue("both ready", () -> pool.readyStates().size() == 2);
            PromptInFlight first = pool.promptSent(list.get(1), 300);
            PromptInFlight second = pool.promptSent(list.get(1), 200);
            assertThat(pool.readyStates()).extracting(EndpointState::promptTokensInFlight).containsExactly(0L, 500L);
            // a scrape replaces the metrics, not the tally: no scrape shows prompts being prefilled
            long scrapedBefore = pool.statuses().get(1).lastGoodNanos();
            awaitTrue("rescraped", () -> pool.statuses().get(1).lastGoodNanos() != scrapedBefore);
            first.answered();
            first.answered(); // the first byte and the finally both report: counted once
            assertThat(pool.promptTokensInFlight(list.get(1))).isEqualTo(200);
            second.answered();
            assertThat(pool.promptTokensInFlight(list.get(1))).isZero();

            // an endpoint that leaves and comes back starts a new tally; a request sent before does not touch it
            PromptInFlight beforeRemoval = pool.promptSent(list.get(0), 100);
            pool.setEndpoints(List.of(list.get(1)));
            pool.setEndpoints(list);
            PromptInFlight afterReturn = pool.promptSent(list.get(0), 40);
            beforeRemoval.answered();
            assertThat(pool.promptTokensInFlight(list.get(0))).isEqualTo(40);
            afterReturn.answered();
            pool.promptSent(new Endpoint("127.0.0.1", 1), 10).answered(); // not in the pool: counted nowhere
            assertThat(pool.promptTokensInFlight(new Endpoint("127.0.0.1", 1))).isZero();
        }
    }

    @Test
    void promptTallyReturnsToZeroUnderConcurrentRequests() throws Exception {
        List<Endpoint> list = endpoints(2);
        try (EndpointPool pool = new EndpointPool(EndpointSource.of(list), endpoint -> PAGE, Duration.ofMillis(20),
                Duration.ofSeconds(5), e -> { })) {
            pool.start();
            awaitTrue("both ready", () -> pool.readyStates().size() == 2);
            int threads = 8;
            int perThread = 2_000;
            java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
            AtomicInteger finished = new AtomicInteger();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Endpoint target = list.get(t % 2);
                workers.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < perThread; i++) {
                        PromptInFlight request = pool.promptSent(target, 1 + i % 7);
                        pool.readyStates();
                        request.answered();
                    }
                    finished.incrementAndGet();
                }));
            }
            start.countDown();
            for (Thread worker : workers) {
                worker.join(Duration.ofSeconds(30));
            }
            assertThat(finished.get()).isEqualTo(threads);
            assertThat(pool.promptTokensInFlight(list.get(0))).isZero();
            assertThat(pool.promptTokensInFlight(list.get(1))).isZero();
        }
    }

    @Test
    void endpointIsReadyOnlyWhileItsDataIsFresh() throws Exception {
        Set<Endpoint> down = ConcurrentHashMap.newKeySet();
        AtomicInteger failures = new AtomicInteger();
        EndpointPool.Fetcher fetcher = endpoint -> {
            if (down.contains(endpoint)) {
                throw new IOException("connection refused");
            }
            return PAGE;
        };
        List<Endpoint> list = endpoints(2);
        try (EndpointPool pool = new EndpointPool(EndpointSource.of(list), fetcher, Duration.ofMillis(20),
                Duration.ofMillis(100), e -> failures.incrementAndGet())) {
            assertThat(pool.readyStates()).isEmpty();
            pool.start();
            awaitTrue("both ready", () -> pool.readyStates().size() == 2);
            assertThat(pool.readyStates().getFirst().metrics().waitingRequests()).isEqualTo(2);

            down.add(list.get(1));
            awaitTrue("second out", () -> pool.readyStates().size() == 1);
            assertThat(pool.readyStates().getFirst().endpoint()).isEqualTo(list.get(0));
            // The failure is reported to the listener right after the endpoint leaves the ready set.
            awaitTrue("failure counted", () -> failures.get() > 0);
            assertThat(pool.statuses().get(1).lastError()).contains("connection refused");

            down.clear();
            awaitTrue("second back", () -> pool.readyStates().size() == 2);
        }
    }

    @Test
    void hungScrapeMakesDataStaleAndNeverStacksUp() throws Exception {
        Map<Endpoint, AtomicInteger> inFlight = new ConcurrentHashMap<>();
        AtomicInteger maxInFlight = new AtomicInteger();
        Set<Endpoint> hang = ConcurrentHashMap.newKeySet();
        EndpointPool.Fetcher fetcher = endpoint -> {
            int now = inFlight.computeIfAbsent(endpoint, e -> new AtomicInteger()).incrementAndGet();
            maxInFlight.accumulateAndGet(now, Math::max);
            try {
                if (hang.contains(endpoint)) {
                    Thread.sleep(400);
                }
                return PAGE;
            } finally {
                inFlight.get(endpoint).decrementAndGet();
            }
        };
        List<Endpoint> list = endpoints(3);
        try (EndpointPool pool = new EndpointPool(EndpointSource.of(list), fetcher, Duration.ofMillis(10),
                Duration.ofMillis(80), e -> { })) {
            pool.start();
            awaitTrue("all ready", () -> pool.readyStates().size() == 3);
            hang.add(list.get(0));
            awaitTrue("hung endpoint stale", () -> pool.readyStates().size() == 2);
            Thread.sleep(200);
            assertThat(pool.readyStates()).extracting(EndpointState::endpoint).containsExactly(list.get(1), list.get(2));
        }
        assertThat(maxInFlight.get()).isEqualTo(1);
    }

    @Test
    void scrapesRunConcurrently() throws Exception {
        // 30 endpoints that each take 100 ms: one round done one after the other would take 3 s.
        EndpointPool.Fetcher slow = endpoint -> {
            Thread.sleep(100);
            return PAGE;
        };
        try (EndpointPool pool = new EndpointPool(EndpointSource.of(endpoints(30)), slow, Duration.ofMillis(50),
                Duration.ofMillis(500), e -> { })) {
            long started = System.nanoTime();
            pool.start();
            awaitTrue("all ready", () -> pool.readyStates().size() == 30);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofMillis(1500));
        }
    }

    @Test
    void malformedPageIsAFailedScrape() throws Exception {
        AtomicInteger failures = new AtomicInteger();
        try (EndpointPool pool = new EndpointPool(EndpointSource.of(endpoints(1)), e -> "broken{ 1\n",
                Duration.ofMillis(10), Duration.ofMillis(100), e -> failures.incrementAndGet())) {
            pool.start();
            awaitTrue("a failure", () -> failures.get() > 2);
            assertThat(pool.readyStates()).isEmpty();
            assertThat(pool.statuses().getFirst().lastError()).startsWith("malformed page");
        }
    }

    @Test
    void markUnreachableTakesAnEndpointOutUntilTheNextGoodScrape() throws Exception {
        try (EndpointPool pool = new EndpointPool(EndpointSource.of(endpoints(1)), e -> PAGE,
                Duration.ofMillis(10), Duration.ofMillis(100), e -> { })) {
            pool.tick();
            awaitTrue("ready", () -> pool.readyStates().size() == 1);
            pool.markUnreachable(endpoints(1).getFirst(), "refused");
            assertThat(pool.readyStates()).isEmpty();
            pool.tick();
            awaitTrue("ready again", () -> pool.readyStates().size() == 1);
        }
    }

    @Test
    void endpointsFileIsReReadWhenItChanges() throws Exception {
        // Each rewrite is a rename, as config tools do it: a truncated file read halfway is an empty pool.
        Path file = Files.createTempFile("endpoints", ".txt");
        try {
            Files.writeString(file, "# pool\n127.0.0.1:9000\n127.0.0.1:9001, 127.0.0.1:9002\n");
            EndpointsFile source = new EndpointsFile(file);
            try (EndpointPool pool = new EndpointPool(source, e -> PAGE, Duration.ofMillis(10),
                    Duration.ofMillis(200), e -> { })) {
                pool.start();
                awaitTrue("three", () -> pool.readyStates().size() == 3);
                replace(file, "127.0.0.1:9002\n");
                awaitTrue("one", () -> pool.readyStates().size() == 1);
                assertThat(pool.statuses()).extracting(s -> s.endpoint().port()).containsExactly(9002);
                replace(file, "not an endpoint\n");
                Thread.sleep(100);
                assertThat(pool.statuses()).extracting(s -> s.endpoint().port()).containsExactly(9002);
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void parsesEndpointLists() {
        assertThat(EndpointSource.parseList("a:1,b:2\n  c:3 # comment\n\na:1"))
                .containsExactly(new Endpoint("a", 1), new Endpoint("b", 2), new Endpoint("c", 3));
        assertThat(Endpoint.parse("[::1]:8000").address()).isEqualTo("[::1]:8000");
        assertThatThrownBy(() -> Endpoint.parse("nohost")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Endpoint.parse("h:99999")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Endpoint.parse("h:x")).isInstanceOf(IllegalArgumentException.class);
    }

    private static void replace(Path file, String content) throws java.io.IOException {
        Path next = Files.createTempFile(file.getParent(), "endpoints", ".next");
        Files.writeString(next, content);
        Files.move(next, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
