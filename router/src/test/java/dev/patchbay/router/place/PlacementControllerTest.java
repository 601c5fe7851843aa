package dev.patchbay.router.place;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.scrape.AdapterResidency;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class PlacementControllerTest {
    static final PlacementSettings SETTINGS =
            new PlacementSettings(Duration.ofSeconds(1), Duration.ofSeconds(5), 2, 2, 3);

    /** Records calls; each answers when the test completes it. */
    static final class RecordingAdmin implements AdapterAdmin {
        final List<String> calls = new ArrayList<>();
        final List<CompletableFuture<Void>> answers = new ArrayList<>();

        @Override
        public synchronized CompletableFuture<Void> load(
                Endpoint endpoint, String adapter, String path, boolean served) {
            return record("load " + adapter + " " + endpoint.host() + (served ? " in place" : ""));
        }

        @Override
        public synchronized CompletableFuture<Void> unload(Endpoint endpoint, String adapter) {
            return record("unload " + adapter + " " + endpoint.host());
        }

        private CompletableFuture<Void> record(String call) {
            calls.add(call);
            CompletableFuture<Void> answer = new CompletableFuture<>();
            answers.add(answer);
            return answer;
        }

        synchronized void answerAll() {
            answers.forEach(a -> a.complete(null));
        }

        synchronized void failAll() {
            answers.forEach(a -> a.completeExceptionally(new IllegalStateException("404")));
        }
    }

    final AtomicLong clock = new AtomicLong();
    final AtomicReference<FleetState> fleet = new AtomicReference<>(Fleets.empty(3, 2));
    final RecordingAdmin admin = new RecordingAdmin();
    final PlacementController controller =
            new PlacementController(SETTINGS, new BalancedPlacement(), fleet::get, admin, clock::get);

    /** {@code n} arrivals for {@code adapter}, then a second passes and a scrape round ends. */
    void second(Map<String, Integer> arrivals) {
        arrivals.forEach((adapter, n) -> {
            for (int i = 0; i < n; i++) controller.arrived(adapter);
        });
        clock.addAndGet(1_000_000_000L);
        controller.onRound();
    }

    @Test
    void ticksOncePerIntervalWhateverTheRounds() {
        controller.onRound();
        long first = controller.report().tick();
        clock.addAndGet(400_000_000L);
        controller.onRound();
        controller.onRound();
        assertThat(controller.report().tick()).isEqualTo(first);
        clock.addAndGet(600_000_000L);
        controller.onRound();
        assertThat(controller.report().tick()).isEqualTo(first + 1);
    }

    @Test
    void preloadsMissingHomesAtMostTheCapATick() {
        controller.onRound();
        second(Map.of("hot", 90, "warm", 10));

        // hot has 90% of 6 slots: 3 homes (one per server), warm one, which on-demand loading gives it anyway, so
        // only hot's are loaded ahead; 2 loads a tick at most.
        assertThat(controller.placement().homesOf("hot")).hasSize(3);
        assertThat(controller.placement().homes().get("warm")).hasSize(1);
        assertThat(admin.calls).hasSize(2).allMatch(c -> c.startsWith("load hot"));
        second(Map.of("hot", 90, "warm", 10));
        assertThat(admin.calls).hasSize(3).allMatch(c -> c.startsWith("load hot"));
        // Pending loads are not asked twice, and a home whose load answered is not asked again within the cooldown.
        admin.answerAll();
        second(Map.of("hot", 90, "warm", 10));
        assertThat(admin.calls).hasSize(3);
        assertThat(controller.loadsStarted()).isEqualTo(3);
    }

    @Test
    void aServerServingTheAdapterIsAskedToLoadItInPlace() {
        controller.onRound();
        List<ServerView> servers = new ArrayList<>(fleet.get().servers());
        for (int i = 0; i < 3; i++) {
            ServerView s = servers.get(i);
            servers.set(i, new ServerView(s.endpoint(), 2, Map.of(), Map.of(), java.util.Set.of("base", "hot")));
        }
        fleet.set(new FleetState(servers, Fleets.PATHS::get));
        second(Map.of("hot", 10));
        assertThat(admin.calls).isNotEmpty().allMatch(c -> c.endsWith("in place"));
    }

    /** Every server holds "hot" in host memory, the ones at {@code pinned} pinned, at {@code busy} with requests. */
    void hotEverywhere(List<Integer> pinned, List<Integer> busy) {
        FleetState held = Fleets.empty(3, 2);
        for (int i = 0; i < 3; i++) {
            AdapterResidency where = new AdapterResidency(false, pinned.contains(i), 8);
            held = Fleets.holding(held, i, Map.of("hot", where), busy.contains(i) ? Map.of("hot", 2) : Map.of());
        }
        fleet.set(held);
    }

    /** Hot is now the coldest: one home of six slots. */
    static final Map<String, Integer> HOT_COOLED = Map.of("hot", 1, "warm", 6, "cold", 3);

    /** Hot held everywhere, then cooled to one home: the copies elsewhere, now surplus. */
    List<Endpoint> spareCopiesOfCooledHot() {
        hotEverywhere(List.of(), List.of());
        controller.onRound();
        second(HOT_COOLED);
        List<Endpoint> spare = new ArrayList<>(fleet.get().endpoints());
        spare.removeAll(controller.placement().homesOf("hot"));
        return spare;
    }

    long unloads(String adapter) {
        return admin.calls.stream()
                .filter(c -> c.startsWith("unload " + adapter))
                .count();
    }

    @Test
    void releasesASurplusCopyInTwoPhases() {
        List<Endpoint> spare = spareCopiesOfCooledHot();
        List<Endpoint> home = controller.placement().homesOf("hot");
        assertThat(home).hasSize(1);

        // Surplus for releaseAfter (2) ticks: routing stops sending it there, and no unload goes out yet.
        second(HOT_COOLED);
        second(HOT_COOLED);
        for (Endpoint e : spare)
            assertThat(controller.placement().isReleased("hot", e)).isTrue();
        assertThat(controller.placement().isReleased("hot", home.getFirst())).isFalse();
        assertThat(unloads("hot")).isZero();
        // The next tick, the servers still show no request for it: the unloads go out, one per spare copy.
        second(HOT_COOLED);
        assertThat(admin.calls)
                .contains(
                        "unload hot " + spare.get(0).host(),
                        "unload hot " + spare.get(1).host());
        assertThat(unloads("hot")).isEqualTo(2);
    }

    @Test
    void aSurplusCopyThisRouterStillSendsToIsReleasedOnlyOnceItsSendsStop() {
        List<Endpoint> spare = spareCopiesOfCooledHot();
        Endpoint used = spare.get(0), idle = spare.get(1);

        // Requests too short to show on any page at a tick still go to `used` every second: it stays in routing.
        for (int i = 0; i < 6; i++) {
            controller.sent("hot", used);
            second(HOT_COOLED);
        }
        assertThat(controller.placement().isReleased("hot", idle)).isTrue();
        assertThat(controller.placement().isReleased("hot", used)).isFalse();
        assertThat(admin.calls).doesNotContain("unload hot " + used.host());

        // Its sends stop: releaseAfter (2) ticks after the last one routing stops sending there, and the unload
        // follows a tick later.
        second(HOT_COOLED);
        assertThat(controller.placement().isReleased("hot", used)).isTrue();
        assertThat(admin.calls).doesNotContain("unload hot " + used.host());
        second(HOT_COOLED);
        assertThat(admin.calls).contains("unload hot " + used.host());
    }

    @Test
    void pinnedAndBusyCopiesAreNeverReleased() {
        hotEverywhere(List.of(), List.of());
        controller.onRound();
        second(HOT_COOLED);
        List<Endpoint> home = controller.placement().homesOf("hot");
        List<Integer> others = new ArrayList<>();
        for (int i = 0; i < 3; i++) if (!home.contains(Fleets.server(i))) others.add(i);
        hotEverywhere(List.of(others.get(0)), List.of(others.get(1)));

        for (int i = 0; i < 8; i++) second(HOT_COOLED);

        assertThat(unloads("hot")).isZero();
        assertThat(controller.placement().released()).isEmpty();
    }

    @Test
    void aServerWhoseAdminApiFailsIsLeftAloneForAWhile() {
        controller.onRound();
        second(Map.of("hot", 10));
        int asked = admin.calls.size();
        admin.failAll();
        for (int i = 0; i < 20; i++) second(Map.of("hot", 10));
        assertThat(controller.loadsFailed()).isEqualTo(asked);
        List<String> failedHosts =
                admin.calls.subList(0, asked).stream().map(c -> c.split(" ")[2]).toList();
        assertThat(admin.calls.subList(asked, admin.calls.size()))
                .noneMatch(c -> failedHosts.contains(c.split(" ")[2]));
    }

    @Test
    void arrivalsFromManyThreadsAreAllCounted() throws Exception {
        int threads = 8, each = 5000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String adapter = "adapter-" + (t % 3);
                done.add(pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        controller.arrived(adapter);
                        if (i % 500 == 0) {
                            synchronized (clock) {
                                clock.addAndGet(1_000_000L);
                                controller.onRound();
                            }
                        }
                    }
                }));
            }
            for (Future<?> f : done) f.get();
        } finally {
            pool.shutdown();
        }
        clock.addAndGet(2_000_000_000L);
        controller.onRound();
        assertThat(controller.report().adapters()).containsOnlyKeys("adapter-0", "adapter-1", "adapter-2");
        long counted = 0;
        for (String a : controller.report().adapters().keySet()) counted += ratesTotal(a);
        assertThat(counted).isEqualTo((long) threads * each);
    }

    @Test
    void sendsFromManyThreadsKeepTheirCopyInRoutingWhileTicksRun() throws Exception {
        List<Endpoint> spare = spareCopiesOfCooledHot();
        Endpoint used = spare.get(0), idle = spare.get(1);
        AtomicLongArray sends = new AtomicLongArray(4);
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> senders = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                senders.add(pool.submit(() -> {
                    while (!stop.get()) {
                        controller.sent("hot", used);
                        sends.incrementAndGet(thread);
                    }
                }));
            }
            for (int i = 0; i < 12; i++) {
                // Every tick sees a send begun after the one before it: some thread's second send since then.
                long[] before = new long[4];
                for (int t = 0; t < 4; t++) before[t] = sends.get(t);
                while (!advancedTwice(sends, before)) Thread.onSpinWait();
                second(HOT_COOLED);
                assertThat(controller.placement().isReleased("hot", used)).isFalse();
            }
            stop.set(true);
            for (Future<?> f : senders) f.get();
        } finally {
            stop.set(true);
            pool.shutdown();
        }
        assertThat(controller.placement().isReleased("hot", idle)).isTrue();
        assertThat(admin.calls).contains("unload hot " + idle.host()).doesNotContain("unload hot " + used.host());
    }

    private static boolean advancedTwice(AtomicLongArray counts, long[] before) {
        for (int t = 0; t < before.length; t++) if (counts.get(t) >= before[t] + 2) return true;
        return false;
    }

    private long ratesTotal(String adapter) {
        return controller.arrivalTotals().getOrDefault(adapter, 0L);
    }
}
