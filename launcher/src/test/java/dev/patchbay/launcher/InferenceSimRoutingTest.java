package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.launcher.InferenceSimFleet.Server;
import dev.patchbay.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two llm-d-inference-sim servers and one {@code patchbay serve} ({@link InferenceSimFleet}) behind a
 * {@code patchbay route} process: the router reads the simulator's pages (whole-second {@code lora_requests_info}
 * series, no residency families) and model lists as it reads Patchbay's. Where a request landed is read from the
 * servers' own counters, not from the router.
 */
class InferenceSimRoutingTest {
    static final Duration STALENESS = Duration.ofSeconds(1);
    static final String LISTED = "patchbay_router_endpoint_served_models";

    @TempDir
    static Path dir;
    static InferenceSimFleet fleet;
    static final LauncherProcesses router = new LauncherProcesses();
    static int routerPort;
    static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() throws Exception {
        fleet = InferenceSimFleet.start(dir);
        LauncherProcesses.Launched route = router.launch("route", "--host", "127.0.0.1", "--port", "0",
                "--staleness", STALENESS.toMillis() + "ms", "--endpoints", fleet.endpoints());
        routerPort = LauncherProcesses.port(route, LauncherProcesses.ROUTING);
        router.awaitReady(routerPort, 3);
        // base model and both adapters on every server
        for (Server server : fleet.servers()) {
            Await.until("the router to read " + server.name() + "'s model list", () -> listed(server) == 3);
        }
    }

    @AfterAll
    static void stop() throws InterruptedException {
        router.close();
        if (fleet != null) {
            fleet.close();
        }
    }

    @AfterEach
    void everyAnswerThroughTheRouterWasA200() throws Exception {
        assertThat(router.sample(routerPort, "patchbay_router_responses_total", ""))
                .isEqualTo(router.sample(routerPort, "patchbay_router_responses_total", "code=\"200\""));
    }

    private static double listed(Server server) {
        try {
            return router.sample(routerPort, LISTED, "endpoint=\"" + server.address() + "\"");
        } catch (Exception e) {
            return -1;
        }
    }

    private static HttpRequest completion(int port, String model, int maxTokens) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model
                        + "\",\"prompt\":\"the water\",\"max_tokens\":" + maxTokens + ",\"ignore_eos\":true}"))
                .build();
    }

    private static Map<Server, Double> successes() throws Exception {
        Map<Server, Double> counts = new HashMap<>();
        for (Server server : fleet.servers()) {
            counts.put(server, fleet.successes(server));
        }
        return counts;
    }

    private static double since(Map<Server, Double> before, Server server) {
        try {
            return fleet.successes(server) - before.get(server);
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /** Waits until the servers' success counters, together, have counted {@code requests} more than {@code before}. */
    private static void awaitCounted(Map<Server, Double> before, int requests) {
        Await.until("the servers to count " + requests + " requests", () -> {
            double total = 0;
            for (Server server : fleet.servers()) {
                total += since(before, server);
            }
            return total == requests;
        }, () -> fleet.servers().stream().map(s -> s.name() + " " + since(before, s)).toList());
    }

    /**
     * Returns once the router's data for {@code server} comes from a scrape begun after {@code sinceNanos}, so that a
     * request routed from then on is decided on a page the server wrote after then. The router scrapes an endpoint
     * once at a time, so a scrape that ended after another ended after {@code sinceNanos} began after it.
     */
    private static void awaitScrapeBegunAfter(Server server, long sinceNanos) {
        awaitScrapeEndedAfter(server, awaitScrapeEndedAfter(server, sinceNanos));
    }

    /**
     * Waits for the router's data on {@code server} to come from a scrape that ended after {@code sinceNanos}, and
     * returns a moment after that end. The data's age is taken when the router answers, after the question: the
     * question's time less the age is no later than the scrape's end.
     */
    private static long awaitScrapeEndedAfter(Server server, long sinceNanos) {
        return Await.value("the router to scrape " + server.name() + " again", () -> {
            try {
                long asked = System.nanoTime();
                double age = router.sample(routerPort, "patchbay_router_endpoint_data_age_seconds",
                        "endpoint=\"" + server.address() + "\"");
                return asked - (long) (age * 1e9) > sinceNanos ? (Long) System.nanoTime() : null;
            } catch (Exception e) {
                return null;
            }
        });
    }

    /**
     * (a) A short request for chat, then a long one for sql, are sent to one simulator directly; while the long one
     * runs, that simulator's newest {@code lora_requests_info} series lists sql running, and the router sends every
     * further sql request there. The chat request's end and the sql request's start mostly fall within one second:
     * then an empty series ties with the sql one, and the page puts it first.
     */
    @Test
    void requestsForAnAdapterRunningOnASimulatorLandThere() throws Exception {
        Server home = fleet.sims().getFirst();
        Map<Server, Double> before = successes();
        assertThat(http.send(completion(home.port(), "chat", 1), HttpResponse.BodyHandlers.ofString()).statusCode())
                .isEqualTo(200);
        CompletableFuture<HttpResponse<String>> longRequest =
                http.sendAsync(completion(home.port(), "sql", 200), HttpResponse.BodyHandlers.ofString());
        Await.until(home.name() + "'s newest lora_requests_info series to list sql running", () -> {
            try {
                return fleet.newestSeriesRun(home, "sql");
            } catch (Exception e) {
                return false;
            }
        });
        long seen = System.nanoTime();
        System.out.println(home.name() + "'s newest lora_requests_info series: " + fleet.newestLoraSeries(home));
        awaitScrapeBegunAfter(home, seen);

        int sent = 0;
        while (sent < 8 && !longRequest.isDone()) {
            HttpResponse<String> r = http.send(completion(routerPort, "sql", 2), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            sent++;
        }
        assertThat(longRequest.join().statusCode()).isEqualTo(200);
        System.out.println("sql requests routed while the long one ran: " + sent);
        assertThat(sent).as("the long request outlasts at least one routed request").isPositive();
        awaitCounted(before, sent + 2);
        assertThat(since(before, home)).as("requests " + home.name() + " answered, two of them sent there directly")
                .isEqualTo(sent + 2);
    }

    /**
     * (b) An adapter loaded at run time on one simulator only, through {@code /v1/load_lora_adapter}, becomes a
     * destination once the router has read that simulator's model list, and only there: the other servers would
     * answer 404.
     */
    @Test
    void anAdapterLoadedAtRunTimeOnOneSimulatorIsSentThereOnly() throws Exception {
        Server target = fleet.sims().get(1);
        Map<Server, Double> before = successes();
        fleet.loadAdapter(target, "loaded-later", dir.resolve("sql"));
        Await.until("the router to list loaded-later on " + target.name(), () -> listed(target) == 4,
                () -> listed(target));

        List<CompletableFuture<HttpResponse<String>>> requests = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            requests.add(http.sendAsync(completion(routerPort, "loaded-later", 4), HttpResponse.BodyHandlers.ofString()));
        }
        for (CompletableFuture<HttpResponse<String>> r : requests) {
            assertThat(r.join().statusCode()).as(r.join().body()).isEqualTo(200);
        }
        awaitCounted(before, 8);
        assertThat(since(before, target)).as("requests " + target.name() + " answered").isEqualTo(8);

        // the base model is listed everywhere: any server may take it
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> r = http.send(completion(routerPort, InferenceSimFleet.BASE, 2),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }
}
