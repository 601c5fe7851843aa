package dev.patchbay.router.route;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.config.ModelRewriter;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.EndpointSource;
import dev.patchbay.router.pool.ServedModels;
import dev.patchbay.router.scrape.EndpointMetrics;
import dev.patchbay.testkit.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A model is decided among the endpoints that list it on /v1/models, whichever face asks. */
class ServedModelsRoutingTest {
    private static final Function<String, Optional<String>> NO_HEADERS = name -> Optional.empty();
    private static final Endpoint A = new Endpoint("127.0.0.1", 9001),
            B = new Endpoint("127.0.0.1", 9002),
            C = new Endpoint("127.0.0.1", 9003),
            D = new Endpoint("127.0.0.1", 9004);
    private static final EndpointMetrics IDLE =
            EndpointMetrics.builder().modelName("base").build();

    private final AtomicLong now = new AtomicLong();
    /** Each endpoint's answer to /v1/models: a list, or an IOException. */
    private final Map<Endpoint, Object> lists = new ConcurrentHashMap<>();

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    private static ServedModels listing(String base, String... adapters) {
        Set<String> all = new HashSet<>(Set.of(adapters));
        all.add(base);
        return new ServedModels(all, Set.of(base));
    }

    private ServedModels read(Endpoint endpoint) throws IOException {
        Object answer = lists.get(endpoint);
        if (answer instanceof IOException failure) {
            throw failure;
        }
        return (ServedModels) answer;
    }

    /** A pool of A..D on a clock of its own, every list read at its first round. */
    private EndpointPool pool() {
        EndpointPool pool = new EndpointPool(
                EndpointSource.of(List.of(A, B, C, D)),
                (e, ids) -> IDLE,
                Duration.ofMillis(50),
                Duration.ofHours(1),
                e -> {},
                now::get);
        toClose.add(pool);
        pool.learnServedModels(this::read, Duration.ofSeconds(1));
        return pool;
    }

    private static RequestLifecycle decider(EndpointPool pool, String configJson) throws IOException {
        RouterConfig config = RouterConfig.parse(configJson);
        Random random = new Random(5);
        return new RequestLifecycle(
                pool, Profiles.create("least-queue", random), config, new ModelRewriter(config.rewrites(), random));
    }

    private static RouteDecision decide(RequestLifecycle decider, String model) {
        return decider.decide(
                ("{\"model\":\"" + model + "\",\"prompt\":\"p\"}").getBytes(StandardCharsets.UTF_8), NO_HEADERS);
    }

    private static List<Endpoint> ranked(RouteDecision decision) {
        return decision.ranked().stream().map(EndpointState::endpoint).toList();
    }

    @Test
    void aModelSomeEndpointsListGoesOnlyToThemAndToThoseWhoseListIsNotKnown() throws Exception {
        lists.put(A, listing("base", "x"));
        lists.put(B, listing("base", "y"));
        lists.put(C, new IOException("/v1/models answered HTTP 404"));
        lists.put(D, listing("base"));
        EndpointPool pool = pool();
        pool.scrapeNow();
        RequestLifecycle decider = decider(pool, "{}");

        assertThat(ranked(decide(decider, "x"))).containsExactlyInAnyOrder(A, C);
        assertThat(ranked(decide(decider, "y"))).containsExactlyInAnyOrder(B, C);
        assertThat(ranked(decide(decider, "base")))
                .as("every list has the base model")
                .containsExactlyInAnyOrder(A, B, C, D);
        assertThat(ranked(decide(decider, "on-demand")))
                .as("listed nowhere: a resolver may load it anywhere")
                .containsExactlyInAnyOrder(A, B, C, D);
        assertThat(decide(decider, "x").request().baseModel()).isFalse();

        // loaded at run time on D: a destination from its next list on
        lists.put(D, listing("base", "x"));
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        pool.scrapeNow();
        assertThat(ranked(decide(decider, "x"))).containsExactlyInAnyOrder(A, C, D);

        // unloaded from A, whose list then fails: A may get it again, as may any endpoint of unknown list
        lists.put(A, new IOException("connection refused"));
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        pool.scrapeNow();
        assertThat(ranked(decide(decider, "x"))).containsExactlyInAnyOrder(A, C, D);
    }

    @Test
    void aBaseModelGoesOnlyWhereItIsListedUnderAnyName() throws Exception {
        lists.put(A, listing("llama", "x"));
        lists.put(B, new ServedModels(Set.of("llama", "llama-alias"), Set.of("llama", "llama-alias")));
        lists.put(C, listing("base", "x"));
        lists.put(D, listing("base"));
        EndpointPool pool = pool();
        pool.scrapeNow();
        RequestLifecycle decider = decider(pool, "{\"adapters\": [\"x\"]}");

        RouteDecision alias = decide(decider, "llama-alias");
        assertThat(alias.refused())
                .as("listed without a parent: a base model, whatever the adapter list")
                .isFalse();
        assertThat(alias.request().baseModel()).isTrue();
        assertThat(ranked(alias)).containsExactly(B);
        assertThat(ranked(decide(decider, "llama"))).containsExactlyInAnyOrder(A, B);
        assertThat(decide(decider, "base").request().baseModel()).isTrue();
        assertThat(ranked(decide(decider, "base"))).containsExactlyInAnyOrder(C, D);
    }

    @Test
    void anAdapterListedByAServerIsKnownEvenWithAClosedAdapterList() throws Exception {
        lists.put(A, listing("base", "loaded-later"));
        lists.put(B, listing("base"));
        lists.put(C, listing("base"));
        lists.put(D, listing("base"));
        EndpointPool pool = pool();
        pool.scrapeNow();
        RequestLifecycle decider = decider(pool, "{\"adapters\": [\"x\"]}");
        RouteDecision decision = decide(decider, "loaded-later");
        assertThat(decision.refused()).isFalse();
        assertThat(ranked(decision)).containsExactly(A);
        assertThat(decide(decider, "typo").error().code()).isEqualTo("model_not_found");
    }

    @Test
    void theSubsetHintAndTheListsBothApply() throws Exception {
        lists.put(A, listing("base", "x"));
        lists.put(B, listing("base", "x"));
        lists.put(C, listing("base"));
        lists.put(D, listing("base"));
        EndpointPool pool = pool();
        pool.scrapeNow();
        RequestLifecycle decider = decider(pool, "{}");
        byte[] body = "{\"model\":\"x\"}".getBytes(StandardCharsets.UTF_8);
        assertThat(ranked(decider.decide(body, NO_HEADERS, Set.of(B, C)::contains)))
                .containsExactly(B);
        RouteDecision none = decider.decide(body, NO_HEADERS, Set.of(C, D)::contains);
        assertThat(none.refused()).as("no endpoint in the hint serves it").isTrue();
        assertThat(none.error().status()).isEqualTo(503);
    }

    @Test
    void decisionsOfEightThreadsWhileListsChangeNeverGoWhereTheModelIsNotListed() throws Exception {
        // A always lists x, C never (a known list without it), D's list never comes; B's list changes on every read.
        lists.put(A, listing("base", "x"));
        lists.put(C, listing("base", "y"));
        lists.put(D, new IOException("timed out"));
        AtomicInteger readsOfB = new AtomicInteger();
        EndpointPool pool = new EndpointPool(
                EndpointSource.of(List.of(A, B, C, D)),
                (e, ids) -> IDLE,
                Duration.ofMillis(1),
                Duration.ofSeconds(5),
                e -> {},
                System::nanoTime);
        toClose.add(pool);
        pool.learnServedModels(
                endpoint -> {
                    if (endpoint.equals(B)) {
                        return readsOfB.incrementAndGet() % 2 == 0 ? listing("base", "x") : listing("base", "y");
                    }
                    return read(endpoint);
                },
                Duration.ofNanos(1));
        pool.start();
        Await.until("every endpoint ready and listed", () -> pool.readyStates().size() == 4 && readsOfB.get() > 0);
        RequestLifecycle decider = decider(pool, "{}");
        int until = readsOfB.get() + 200;
        Set<Set<Endpoint>> seenForX = ConcurrentHashMap.newKeySet();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    while (readsOfB.get() < until) {
                        RouteDecision x = decide(decider, "x");
                        assertThat(x.refused()).isFalse();
                        assertThat(ranked(x)).contains(A, D).doesNotContain(C);
                        seenForX.add(Set.copyOf(ranked(x)));
                        RouteDecision y = decide(decider, "y");
                        assertThat(ranked(y)).contains(C, D).doesNotContain(A);
                        assertThat(ranked(decide(decider, "base"))).hasSize(4);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(failure.get()).isNull();
        assertThat(seenForX).as("B came and went as its list changed").contains(Set.of(A, D), Set.of(A, B, D));
    }
}
