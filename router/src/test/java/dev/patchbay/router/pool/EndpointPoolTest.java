package dev.patchbay.router.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.scrape.AdapterIds;
import dev.patchbay.router.scrape.EndpointMetrics;
import dev.patchbay.testkit.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class EndpointPoolTest {
    /** {@code send}, counted in its endpoint's metrics until shown, as the own-picks-counter counts a pick. */
    private static Send counted(Send send) {
        send.countUntilShown();
        return send;
    }

    private static final String PAGE = page(2);

    /** The least a page must show for the pool to route on it: both queues and KV-cache usage. */
    static String page(int waiting) {
        return "vllm:num_requests_waiting{model_name=\"m\"} " + waiting + "\n"
                + "vllm:num_requests_running{model_name=\"m\"} 0\n"
                + "vllm:kv_cache_usage_perc{model_name=\"m\"} 0.1\n";
    }

    static void awaitTrue(String what, BooleanSupplier condition) {
        Await.until(what, condition);
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
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list), endpoint -> PAGE, Duration.ofMillis(20), Duration.ofSeconds(5), e -> {})) {
            pool.start();
            awaitTrue("both ready", () -> pool.readyStates().size() == 2);
            Send first = pool.sent(list.get(1), null, 300);
            Send second = pool.sent(list.get(1), null, 200);
            assertThat(pool.readyStates())
                    .extracting(EndpointState::promptTokensInFlight)
                    .containsExactly(0L, 500L);
            // a scrape replaces the metrics, not the tally: no scrape shows prompts being prefilled
            long scrapedBefore = pool.statuses().get(1).lastGoodNanos();
            awaitTrue("rescraped", () -> pool.statuses().get(1).lastGoodNanos() != scrapedBefore);
            first.answering();
            first.finished(); // the first byte and the finally both report: counted once
            assertThat(pool.promptTokensInFlight(list.get(1))).isEqualTo(200);
            second.finished();
            assertThat(pool.promptTokensInFlight(list.get(1))).isZero();

            // an endpoint that leaves and comes back starts a new tally; a request sent before does not touch it
            Send beforeRemoval = pool.sent(list.get(0), null, 100);
            pool.setEndpoints(List.of(list.get(1)));
            pool.setEndpoints(list);
            Send afterReturn = pool.sent(list.get(0), null, 40);
            beforeRemoval.finished();
            assertThat(pool.promptTokensInFlight(list.get(0))).isEqualTo(40);
            afterReturn.finished();
            pool.sent(new Endpoint("127.0.0.1", 1), null, 10).finished(); // not in the pool: counted nowhere
            assertThat(pool.promptTokensInFlight(new Endpoint("127.0.0.1", 1))).isZero();
        }
    }

    @Test
    void aServerCountingItsTokensWaitingAddsTheOtherRoutersPromptsToTheTally() {
        AtomicLong now = new AtomicLong();
        AtomicReference<String> page = new AtomicReference<>(PAGE + "vllm:num_tokens_waiting{model_name=\"m\"} 1000\n");
        List<Endpoint> list = endpoints(1);
        Endpoint e = list.getFirst();
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list),
                EndpointPool.pages(endpoint -> page.get()),
                Duration.ofSeconds(60),
                Duration.ofSeconds(600),
                endpoint -> {},
                now::get)) {
            pool.scrapeNow(); // the pool reads its list
            Send before = pool.sent(e, null, 300);
            pool.scrapeNow(); // the server's 1,000: these 300 and 700 of other routers'
            assertThat(pool.promptBacklog(e)).isEqualTo(1000);
            Send after = pool.sent(e, null, 200); // no page shows it yet
            assertThat(pool.promptBacklog(e)).isEqualTo(1200);
            assertThat(pool.candidates(endpoint -> true).states())
                    .extracting(EndpointState::promptTokensInFlight)
                    .containsExactly(1200L);
            after.answering();
            assertThat(pool.promptBacklog(e)).isEqualTo(1000);
            before.answering(); // the tally knows at once; the page, older, still holds the others' 700
            assertThat(pool.promptBacklog(e)).isEqualTo(700);
            assertThat(pool.promptTokensInFlight(e))
                    .as("the router's own tally")
                    .isZero();

            page.set(PAGE); // a server without the family (vLLM): the router's own prompts only
            pool.scrapeNow();
            pool.sent(e, null, 50);
            assertThat(pool.promptBacklog(e)).isEqualTo(50);
        }
    }

    @Test
    void eachPoolReadsPagesInItsOwnAdapterIdTable() {
        String page = PAGE + "vllm:max_gpu_lora_adapters{model_name=\"m\"} 2\n"
                + "vllm:lora_adapter_loaded{model_name=\"m\",adapter_name=\"only-in-pool-test\",level=\"gpu\",pinned=\"false\",rank=\"8\"} 1\n";
        List<Endpoint> list = endpoints(1);
        try (EndpointPool first = new EndpointPool(
                        EndpointSource.of(list),
                        EndpointPool.pages(e -> page),
                        Duration.ofHours(1),
                        Duration.ofHours(1),
                        e -> {},
                        () -> 0);
                EndpointPool second = new EndpointPool(
                        EndpointSource.of(list),
                        EndpointPool.pages(e -> page),
                        Duration.ofHours(1),
                        Duration.ofHours(1),
                        e -> {},
                        () -> 0)) {
            first.scrapeNow();
            second.scrapeNow();
            EndpointMetrics a = first.readyStates().getFirst().metrics();
            EndpointMetrics b = second.readyStates().getFirst().metrics();
            assertThat(a.slotAdapters().names()).containsExactly("only-in-pool-test");
            assertThat(a.placements().table())
                    .isNotSameAs(b.placements().table())
                    .isNotSameAs(AdapterIds.UNPOOLED);
            assertThat(a.placements().table().find("only-in-pool-test")).isZero();
            assertThat(AdapterIds.UNPOOLED.find("only-in-pool-test"))
                    .as("the process-wide table does not grow")
                    .isEqualTo(-1);
        }
    }

    @Test
    void ownRequestsCountUntilAScrapeBegunAfterThemAndFinishedOnesNotAtAll() throws Exception {
        Endpoint endpoint = endpoints(1).getFirst();
        AtomicReference<String> page = new AtomicReference<>(PAGE); // 2 waiting
        AtomicReference<CountDownLatch> hold = new AtomicReference<>();
        CountDownLatch fetching = new CountDownLatch(1);
        EndpointPool.Fetcher fetcher = e -> {
            CountDownLatch gate = hold.get();
            if (gate != null) {
                fetching.countDown();
                gate.await();
            }
            return page.get();
        };
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(List.of(endpoint)), fetcher, Duration.ofHours(1), Duration.ofHours(1), e -> {})) {
            pool.tick();
            awaitTrue("ready", () -> pool.readyStates().size() == 1);
            Supplier<EndpointMetrics> seen = () -> pool.readyStates().getFirst().metrics();

            Send first = counted(pool.sent(endpoint, "sql", 10));
            assertThat(seen.get().waitingRequests()).isEqualTo(3);
            assertThat(seen.get().waitingAdapters()).containsExactly("sql");
            first.answering();
            assertThat(seen.get().waitingRequests()).isEqualTo(2);
            assertThat(seen.get().runningRequests()).isEqualTo(1);
            assertThat(seen.get().activeAdapters()).containsExactly("sql");
            first.finished();
            first.finished();
            assertThat(seen.get().waitingRequests()).isEqualTo(2);
            assertThat(seen.get().runningRequests()).isZero();
            assertThat(seen.get().waitingAdapters()).isEmpty();

            // A scrape begun before a send cannot show it; one begun after shows the server's own count.
            Send before = counted(pool.sent(endpoint, null, 0));
            hold.set(new CountDownLatch(1));
            long scrapedBefore = pool.statuses().getFirst().lastGoodNanos();
            pool.tick();
            fetching.await();
            Send during = counted(pool.sent(endpoint, null, 0));
            assertThat(seen.get().waitingRequests()).isEqualTo(4);
            page.set(page(5));
            hold.get().countDown();
            awaitTrue("rescraped", () -> pool.statuses().getFirst().lastGoodNanos() != scrapedBefore);
            assertThat(seen.get().waitingRequests())
                    .as("the server's 5 and the request sent during the scrape")
                    .isEqualTo(6);
            before.finished(); // shown by the scrape already: the server's count stands
            assertThat(seen.get().waitingRequests()).isEqualTo(6);
            during.finished();
            assertThat(seen.get().waitingRequests()).isEqualTo(5);
        }
    }

    @Test
    void countedUntilShownARequestStaysUntilThePageCountsItAndIsNeverCountedTwice() {
        Endpoint endpoint = endpoints(1).getFirst();
        AtomicReference<EndpointMetrics> page =
                new AtomicReference<>(EndpointMetrics.builder().slots(2, 0).build());
        AtomicLong now = new AtomicLong();
        AtomicInteger rounds = new AtomicInteger();
        try (EndpointPool exact = new EndpointPool(
                        EndpointSource.of(List.of(endpoint)),
                        (e, ids) -> page.get(),
                        Duration.ofSeconds(1),
                        Duration.ofHours(1),
                        e -> {},
                        now::get);
                EndpointPool optimistic = new EndpointPool(
                        EndpointSource.of(List.of(endpoint)),
                        (e, ids) -> page.get(),
                        Duration.ofSeconds(1),
                        Duration.ofHours(1),
                        e -> {},
                        now::get)) {
            exact.countRequestsUntilShown();
            exact.afterEachRound(rounds::incrementAndGet);
            Function<EndpointPool, Integer> sqlWaiting = pool ->
                    pool.readyStates().getFirst().metrics().adapterWaiting().getOrDefault("sql", 0);
            exact.scrapeNow();
            optimistic.scrapeNow();
            assertThat(rounds.get()).isEqualTo(1);

            now.set(10);
            Send inExact = counted(exact.sent(endpoint, "sql", 0));
            Send inOptimistic = counted(optimistic.sent(endpoint, "sql", 0));
            assertThat(sqlWaiting.apply(exact)).isEqualTo(1);

            // The server got it, but its page is a step old: it does not show it yet.
            now.set(20);
            exact.scrapeNow();
            optimistic.scrapeNow();
            assertThat(sqlWaiting.apply(exact))
                    .as("still counted by the router")
                    .isEqualTo(1);
            assertThat(sqlWaiting.apply(optimistic))
                    .as("taken as shown by a scrape begun after the send")
                    .isZero();

            page.set(EndpointMetrics.builder()
                    .slots(2, 0)
                    .adapterWaiting("sql", 1)
                    .build());
            now.set(30);
            exact.scrapeNow();
            assertThat(sqlWaiting.apply(exact))
                    .as("the page's count, not the page's and the router's")
                    .isEqualTo(1);
            inExact.finished();
            assertThat(sqlWaiting.apply(exact))
                    .as("shown by the page: the server's count stands")
                    .isEqualTo(1);
            page.set(EndpointMetrics.builder().slots(2, 0).build());
            now.set(40);
            exact.scrapeNow();
            assertThat(sqlWaiting.apply(exact)).isZero();
            assertThat(rounds.get()).isEqualTo(4);
            inOptimistic.finished();

            // A request the page never shows (it ended on the server, its end not seen yet) stops counting after
            // two scrape intervals.
            Send neverShown = counted(exact.sent(endpoint, "sql", 0));
            now.set(40 + 2_000_000_000L);
            exact.scrapeNow();
            assertThat(sqlWaiting.apply(exact))
                    .as("within two intervals of its send")
                    .isEqualTo(1);
            now.set(41 + 2_000_000_000L);
            exact.scrapeNow();
            assertThat(sqlWaiting.apply(exact)).as("past them").isZero();
            neverShown.finished();
        }
    }

    @Test
    void ownRequestsFromManyThreadsLeaveTheScrapedCountsAsTheyWere() throws Exception {
        List<Endpoint> list = endpoints(2);
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list), endpoint -> PAGE, Duration.ofMillis(5), Duration.ofMinutes(5), e -> {})) {
            pool.start();
            awaitTrue("both ready", () -> pool.readyStates().size() == 2);
            int threads = 8;
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Endpoint target = list.get(t % 2);
                String adapter = t % 3 == 0 ? null : "a" + t;
                workers.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < 2_000; i++) {
                        Send request = counted(pool.sent(target, adapter, 3));
                        if (i % 2 == 0) {
                            request.answering();
                        }
                        assertThat(pool.readyStates()).hasSize(2);
                        request.finished();
                    }
                }));
            }
            start.countDown();
            for (Thread worker : workers) {
                worker.join();
            }
            for (EndpointState state : pool.readyStates()) {
                assertThat(state.metrics().waitingRequests()).isEqualTo(2);
                assertThat(state.metrics().runningRequests()).isZero();
                assertThat(state.metrics().waitingAdapters()).isEmpty();
                assertThat(state.promptTokensInFlight()).isZero();
            }
        }
    }

    @Test
    void promptTallyReturnsToZeroUnderConcurrentRequests() throws Exception {
        List<Endpoint> list = endpoints(2);
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list), endpoint -> PAGE, Duration.ofMillis(20), Duration.ofSeconds(5), e -> {})) {
            pool.start();
            awaitTrue("both ready", () -> pool.readyStates().size() == 2);
            int threads = 8;
            int perThread = 2_000;
            CountDownLatch start = new CountDownLatch(1);
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
                        Send request = pool.sent(target, null, 1 + i % 7);
                        pool.readyStates();
                        request.finished();
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
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list),
                fetcher,
                Duration.ofMillis(20),
                // Long beside the scrape interval: a stall of the machine must not age the healthy endpoint out
                // between an await and the assertion after it.
                Duration.ofSeconds(1),
                e -> failures.incrementAndGet())) {
            assertThat(pool.readyStates()).isEmpty();
            pool.start();
            awaitTrue("both ready", () -> pool.readyStates().size() == 2);
            assertThat(pool.readyStates().getFirst().metrics().waitingRequests())
                    .isEqualTo(2);

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
        Map<Endpoint, AtomicInteger> fetches = new ConcurrentHashMap<>();
        AtomicInteger maxInFlight = new AtomicInteger();
        Set<Endpoint> hang = ConcurrentHashMap.newKeySet();
        CountDownLatch release = new CountDownLatch(1);
        EndpointPool.Fetcher fetcher = endpoint -> {
            int now =
                    inFlight.computeIfAbsent(endpoint, e -> new AtomicInteger()).incrementAndGet();
            maxInFlight.accumulateAndGet(now, Math::max);
            fetches.computeIfAbsent(endpoint, e -> new AtomicInteger()).incrementAndGet();
            try {
                if (hang.contains(endpoint)) {
                    release.await(); // a server that never answers, until the test lets it
                }
                return PAGE;
            } finally {
                inFlight.get(endpoint).decrementAndGet();
            }
        };
        List<Endpoint> list = endpoints(3);
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list), fetcher, Duration.ofMillis(10), Duration.ofSeconds(1), e -> {})) {
            pool.start();
            awaitTrue("all ready", () -> pool.readyStates().size() == 3);
            hang.add(list.get(0));
            awaitTrue("hung endpoint stale", () -> pool.readyStates().size() == 2);
            // Many more rounds go by: the hung endpoint gets no second scrape and stays out.
            int hungFetches = fetches.get(list.get(0)).get();
            int othersBefore = fetches.get(list.get(1)).get();
            awaitTrue("20 more rounds", () -> fetches.get(list.get(1)).get() >= othersBefore + 20);
            assertThat(fetches.get(list.get(0)).get()).isEqualTo(hungFetches);
            assertThat(pool.readyStates())
                    .extracting(EndpointState::endpoint)
                    .containsExactly(list.get(1), list.get(2));
            release.countDown();
            awaitTrue("answers again", () -> pool.readyStates().size() == 3);
        }
        assertThat(maxInFlight.get()).isEqualTo(1);
    }

    @Test
    void scrapesRunConcurrently() throws Exception {
        // Every fetch waits until all 30 endpoints are being fetched at once: one after the other, none would return.
        int count = 30;
        CountDownLatch allInFlight = new CountDownLatch(count);
        EndpointPool.Fetcher together = endpoint -> {
            allInFlight.countDown();
            if (!allInFlight.await(60, TimeUnit.SECONDS)) {
                throw new IOException("the other scrapes never started");
            }
            return PAGE;
        };
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(endpoints(count)), together, Duration.ofMillis(50), Duration.ofMinutes(5), e -> {})) {
            pool.start();
            awaitTrue("all ready", () -> pool.readyStates().size() == count);
        }
    }

    @Test
    void malformedPageIsAFailedScrape() throws Exception {
        AtomicInteger failures = new AtomicInteger();
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(endpoints(1)),
                e -> "broken{ 1\n",
                Duration.ofMillis(10),
                Duration.ofMillis(100),
                e -> failures.incrementAndGet())) {
            pool.start();
            awaitTrue("a failure", () -> failures.get() > 2);
            assertThat(pool.readyStates()).isEmpty();
            assertThat(pool.statuses().getFirst().lastError()).startsWith("malformed page");
        }
    }

    @Test
    void aPageThatDoesNotShowTheLoadIsAFailedScrapeWithItsReason() {
        Map<Endpoint, String> pages = new ConcurrentHashMap<>();
        List<Endpoint> list = endpoints(3);
        pages.put(list.get(0), PAGE);
        pages.put(list.get(1), "");
        pages.put(list.get(2), PAGE.replace("} 0.1", "} -0.2"));
        Map<Endpoint, ScrapeFailure> reasons = new ConcurrentHashMap<>();
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list),
                EndpointPool.pages(pages::get),
                Duration.ofHours(1),
                Duration.ofHours(1),
                Duration.ofHours(1),
                reasons::put,
                () -> 0)) {
            pool.scrapeNow();
            assertThat(pool.readyStates()).extracting(EndpointState::endpoint).containsExactly(list.get(0));
            assertThat(reasons)
                    .containsOnly(
                            Map.entry(list.get(1), ScrapeFailure.MISSING_FAMILY),
                            Map.entry(list.get(2), ScrapeFailure.INVALID_VALUE));
            assertThat(pool.statuses().get(1).lastError())
                    .startsWith("unusable page")
                    .contains("num_requests_waiting");
            assertThat(pool.statuses().get(2).lastError()).contains("kv_cache_usage_perc is -0.2");

            // Fixed pages: a good scrape brings them back.
            pages.put(list.get(1), PAGE);
            pages.put(list.get(2), PAGE);
            pool.scrapeNow();
            assertThat(pool.readyStates()).hasSize(3);
        }
    }

    /** Pages from {@link #PAGE}, but for endpoints given a failure to throw. */
    private static EndpointPool.MetricsSource pagesFailingFor(Map<Endpoint, IOException> failing) {
        return EndpointPool.pages(endpoint -> {
            IOException failure = failing.get(endpoint);
            if (failure != null) {
                throw failure;
            }
            return PAGE;
        });
    }

    @Test
    void whenNoEndpointIsFreshTheLastGoodDataStandsInUntilTheMaxStaleness() {
        long ms = 1_000_000;
        AtomicLong clock = new AtomicLong();
        List<Endpoint> list = endpoints(3);
        Map<Endpoint, IOException> failing = new ConcurrentHashMap<>();
        Map<Endpoint, ScrapeFailure> reasons = new ConcurrentHashMap<>();
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list),
                pagesFailingFor(failing),
                Duration.ofHours(1),
                Duration.ofMillis(200),
                Duration.ofSeconds(5),
                reasons::put,
                clock::get)) {
            pool.scrapeNow();
            assertThat(pool.candidates(e -> true).stale()).isFalse();
            assertThat(pool.readyStates()).hasSize(3);

            // No scrape for longer than the staleness bound: every endpoint's data is stale, and stands in.
            clock.set(300 * ms);
            EndpointPool.Candidates candidates = pool.candidates(e -> true);
            assertThat(candidates.stale()).isTrue();
            assertThat(candidates.states()).hasSize(3);

            // A refused connection takes its endpoint out even then; a time-out only lets the data age.
            failing.put(list.get(0), new IOException("connection refused"));
            failing.put(list.get(1), new MetricsFetcher.TimedOutException(Duration.ofMillis(200)));
            failing.put(list.get(2), new MetricsFetcher.TimedOutException(Duration.ofMillis(200)));
            pool.scrapeNow();
            assertThat(reasons)
                    .containsOnly(
                            Map.entry(list.get(0), ScrapeFailure.UNREACHABLE),
                            Map.entry(list.get(1), ScrapeFailure.TIMEOUT),
                            Map.entry(list.get(2), ScrapeFailure.TIMEOUT));
            candidates = pool.candidates(e -> true);
            assertThat(candidates.stale()).isTrue();
            assertThat(candidates.states())
                    .extracting(EndpointState::endpoint)
                    .containsExactly(list.get(1), list.get(2));
            assertThat(pool.candidates(list.get(1)::equals).states())
                    .extracting(EndpointState::endpoint)
                    .as("only the eligible stand in")
                    .containsExactly(list.get(1));

            // Fresh data, where there is any, is all that counts.
            failing.remove(list.get(2));
            pool.scrapeNow();
            candidates = pool.candidates(e -> true);
            assertThat(candidates.stale()).isFalse();
            assertThat(candidates.states()).extracting(EndpointState::endpoint).containsExactly(list.get(2));

            // Data older than the max staleness never stands in: the second's is from 0, the third's from 300 ms.
            clock.set(5_001 * ms);
            assertThat(pool.candidates(e -> true).states())
                    .extracting(EndpointState::endpoint)
                    .containsExactly(list.get(2));
            clock.set(5_301 * ms);
            assertThat(pool.candidates(e -> true)).isEqualTo(new EndpointPool.Candidates(List.of(), false));
            assertThat(pool.readyStates()).isEmpty();

            failing.clear();
            pool.scrapeNow();
            assertThat(pool.candidates(e -> true).stale()).isFalse();
            assertThat(pool.readyStates()).hasSize(3);
        }
    }

    @Test
    void standInDataFarOlderThanTheFreshestIsLeftOut() {
        long ms = 1_000_000;
        AtomicLong clock = new AtomicLong();
        List<Endpoint> list = endpoints(2);
        Map<Endpoint, IOException> failing = new ConcurrentHashMap<>();
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list),
                pagesFailingFor(failing),
                Duration.ofHours(1),
                Duration.ofMillis(200),
                Duration.ofSeconds(5),
                (e, r) -> {},
                clock::get)) {
            pool.scrapeNow(); // both at 0
            clock.set(150 * ms);
            failing.put(list.get(0), new MetricsFetcher.TimedOutException(Duration.ofMillis(200)));
            pool.scrapeNow(); // the second at 150 ms
            clock.set(400 * ms);
            assertThat(pool.candidates(e -> true).states())
                    .as("400 and 250 ms old: 150 ms apart")
                    .hasSize(2);
            clock.set(1_000 * ms);
            // 1000 and 850 ms old: still within the staleness bound of each other
            assertThat(pool.candidates(e -> true).states()).hasSize(2);

            pool.scrapeNow(); // the second at 1 s; the first still times out
            clock.set(1_300 * ms);
            // 1300 and 300 ms old: the first is a second older than the freshest, beyond the 200 ms bound
            EndpointPool.Candidates candidates = pool.candidates(e -> true);
            assertThat(candidates.stale()).isTrue();
            assertThat(candidates.states()).extracting(EndpointState::endpoint).containsExactly(list.get(1));
        }
    }

    @Test
    void maxStalenessShorterThanTheStalenessIsRefused() {
        assertThatThrownBy(() -> new EndpointPool(
                        EndpointSource.of(endpoints(1)),
                        EndpointPool.pages(e -> PAGE),
                        Duration.ofMillis(50),
                        Duration.ofSeconds(1),
                        Duration.ofMillis(500),
                        (e, r) -> {},
                        System::nanoTime))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("max staleness");
    }

    @Test
    void markUnreachableTakesAnEndpointOutUntilTheNextGoodScrape() throws Exception {
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(endpoints(1)), e -> PAGE, Duration.ofMillis(10), Duration.ofMillis(100), e -> {})) {
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
            EndpointsFile file1 = new EndpointsFile(file);
            AtomicInteger reads = new AtomicInteger();
            EndpointSource source = () -> {
                reads.incrementAndGet();
                return file1.current();
            };
            try (EndpointPool pool =
                    new EndpointPool(source, e -> PAGE, Duration.ofMillis(10), Duration.ofMillis(200), e -> {})) {
                pool.start();
                awaitTrue("three", () -> pool.readyStates().size() == 3);
                replace(file, "127.0.0.1:9002\n");
                awaitTrue("one", () -> pool.readyStates().size() == 1);
                assertThat(pool.statuses()).extracting(s -> s.endpoint().port()).containsExactly(9002);
                replace(file, "not an endpoint\n");
                // several rounds re-read the broken file and keep the previous endpoints
                int readsBefore = reads.get();
                awaitTrue("three more reads", () -> reads.get() >= readsBefore + 3);
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

    private static void replace(Path file, String content) throws IOException {
        Path next = Files.createTempFile(file.getParent(), "endpoints", ".next");
        Files.writeString(next, content);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static ServedModels listing(String base, String... adapters) {
        Set<String> all = new HashSet<>(Set.of(adapters));
        all.add(base);
        return new ServedModels(all, Set.of(base));
    }

    @Test
    void modelListsAreReadOnTheirOwnIntervalAndAFailedReadOnlyForgetsTheList() {
        List<Endpoint> list = endpoints(2);
        Endpoint first = list.get(0), second = list.get(1);
        AtomicLong now = new AtomicLong();
        Map<Endpoint, AtomicInteger> reads = new ConcurrentHashMap<>();
        Map<Endpoint, AtomicReference<Object>> answers = Map.of(
                first, new AtomicReference<>(listing("base", "x")),
                second, new AtomicReference<>(new IOException("/v1/models answered HTTP 404")));
        AtomicInteger scrapes = new AtomicInteger();
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list),
                (e, ids) -> {
                    scrapes.incrementAndGet();
                    return EndpointMetrics.EMPTY;
                },
                Duration.ofMillis(50),
                Duration.ofHours(1),
                e -> {},
                now::get)) {
            pool.learnServedModels(
                    endpoint -> {
                        reads.computeIfAbsent(endpoint, e -> new AtomicInteger())
                                .incrementAndGet();
                        Object answer = answers.get(endpoint).get();
                        if (answer instanceof IOException failure) {
                            throw failure;
                        }
                        return (ServedModels) answer;
                    },
                    Duration.ofSeconds(1));
            assertThat(pool.servedModels(first)).as("before the first read").isEqualTo(ServedModels.UNKNOWN);

            pool.scrapeNow();
            assertThat(pool.servedModels(first).models()).containsExactlyInAnyOrder("base", "x");
            assertThat(pool.servedModels(second))
                    .as("a server without the path")
                    .isEqualTo(ServedModels.UNKNOWN);
            assertThat(pool.readyStates())
                    .as("no list is no reason to stop routing there")
                    .hasSize(2);

            now.addAndGet(Duration.ofMillis(999).toNanos());
            pool.scrapeNow();
            pool.scrapeNow();
            assertThat(scrapes.get()).isEqualTo(6);
            assertThat(reads.get(first).get()).as("not due within the interval").isOne();
            assertThat(reads.get(second).get()).isOne();

            answers.get(first).set(new IOException("connection refused"));
            answers.get(second).set(listing("base"));
            now.addAndGet(Duration.ofMillis(1).toNanos());
            pool.scrapeNow();
            assertThat(reads.get(first).get()).isEqualTo(2);
            assertThat(pool.servedModels(first))
                    .as("a failed read forgets the list")
                    .isEqualTo(ServedModels.UNKNOWN);
            assertThat(pool.servedModels(second).models()).containsExactly("base");
            assertThat(pool.servedModels()).containsOnlyKeys(first, second);

            answers.get(first).set(new ServedModels(Set.of(), Set.of()));
            now.addAndGet(Duration.ofSeconds(1).toNanos());
            pool.scrapeNow();
            assertThat(pool.servedModels(first))
                    .as("an empty list says nothing")
                    .isEqualTo(ServedModels.UNKNOWN);
            assertThat(pool.readyStates()).hasSize(2);

            pool.setEndpoints(List.of(second));
            assertThat(pool.servedModels(first)).isEqualTo(ServedModels.UNKNOWN);
            assertThat(pool.servedModels()).containsOnlyKeys(second);
        }
    }

    @Test
    void withoutModelListsEveryListIsUnknownAndNoneIsRead() {
        List<Endpoint> list = endpoints(1);
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list),
                (e, ids) -> EndpointMetrics.EMPTY,
                Duration.ofMillis(50),
                Duration.ofHours(1),
                e -> {},
                () -> 0L)) {
            pool.scrapeNow();
            assertThat(pool.servedModels()).containsExactly(Map.entry(list.getFirst(), ServedModels.UNKNOWN));
        }
    }

    @Test
    void modelListsChangingWhileEightThreadsReadThemAreAlwaysWholeLists() throws Exception {
        List<Endpoint> list = endpoints(3);
        ServedModels even = listing("base", "x", "y"), odd = listing("base", "z");
        AtomicInteger reads = new AtomicInteger();
        try (EndpointPool pool = new EndpointPool(
                EndpointSource.of(list), endpoint -> PAGE, Duration.ofMillis(1), Duration.ofSeconds(5), e -> {})) {
            pool.learnServedModels(
                    endpoint -> {
                        int n = reads.incrementAndGet();
                        if (n % 5 == 0) {
                            throw new IOException("refused");
                        }
                        return n % 2 == 0 ? even : odd;
                    },
                    Duration.ofNanos(1));
            pool.start();
            awaitTrue("every endpoint ready", () -> pool.readyStates().size() == 3);
            int until = reads.get() + 300;
            List<Thread> readers = new ArrayList<>();
            ConcurrentHashMap<String, Boolean> seen = new ConcurrentHashMap<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int t = 0; t < 8; t++) {
                readers.add(Thread.ofPlatform().start(() -> {
                    try {
                        while (reads.get() < until) {
                            for (var entry : pool.servedModels().entrySet()) {
                                ServedModels m = entry.getValue();
                                assertThat(m).isIn(even, odd, ServedModels.UNKNOWN);
                                seen.put(m == even ? "even" : m == odd ? "odd" : "unknown", true);
                            }
                            assertThat(pool.readyStates()).hasSize(3);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            for (Thread reader : readers) {
                reader.join();
            }
            assertThat(failure.get()).isNull();
            assertThat(seen.keySet()).as("the lists changed under the readers").contains("even", "odd");
        }
    }
}
