package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.launcher.InferenceSimFleet.Server;
import dev.patchbay.launcher.gateway.EnvoyConfig;
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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two llm-d-inference-sim servers and one {@code patchbay serve} ({@link InferenceSimFleet}) behind Patchbay's
 * router, twice over: a {@code patchbay route} process as the reverse proxy, and a real Envoy with a
 * {@code patchbay route --ext-proc-port} process as its picker ({@link EnvoyGateway}). The router reads the
 * simulator's pages (whole-second {@code lora_requests_info} series, no residency families) and model lists as it
 * reads Patchbay's. Where a request landed is read from the servers' own counters, not from the router.
 */
class InferenceSimRoutingTest {
    static final Duration STALENESS = Duration.ofSeconds(1);
    static final String LISTED = "patchbay_router_endpoint_served_models";

    /** Where clients send requests, and where that path's router shows its own metrics. */
    record Front(String name, int requestPort, int routerPort) {
        @Override
        public String toString() {
            return name;
        }
    }

    @TempDir
    static Path dir;

    static InferenceSimFleet fleet;
    static final LauncherProcesses routers = new LauncherProcesses();
    static EnvoyGateway gateway;
    static final List<Front> fronts = new ArrayList<>();
    static final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static List<Front> fronts() {
        return fronts;
    }

    @BeforeAll
    static void start() throws Exception {
        fleet = InferenceSimFleet.start(dir);
        LauncherProcesses.Launched route = routers.launch(
                "route",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--staleness",
                STALENESS.toMillis() + "ms",
                "--endpoints",
                fleet.endpoints());
        int proxyPort = LauncherProcesses.port(route, LauncherProcesses.ROUTING);
        fronts.add(new Front("patchbay route", proxyPort, proxyPort));

        gateway = new EnvoyGateway(
                routers, dir, fleet.servers().stream().map(Server::port).toList(), "{}");
        gateway.startPicker();
        routers.awaitReady(gateway.pickerHttpPort(), 3);
        int envoyPort = gateway.startEnvoy(EnvoyConfig.FailureMode.FAIL_CLOSE).listenerPort("gateway");
        fronts.add(new Front("Envoy with Patchbay's picker", envoyPort, gateway.pickerHttpPort()));

        for (Front front : fronts) {
            routers.awaitReady(front.routerPort(), 3);
            // base model and both adapters on every server
            for (Server server : fleet.servers()) {
                Await.until(front + " to read " + server.name() + "'s model list", () -> listed(front, server) == 3);
            }
        }
        Front envoy = fronts.getLast();
        Await.until("Envoy to route through the picker", () -> {
            try {
                return http.send(
                                        completion(envoy.requestPort(), InferenceSimFleet.BASE, 1),
                                        HttpResponse.BodyHandlers.discarding())
                                .statusCode()
                        == 200;
            } catch (Exception e) {
                return false;
            }
        });
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (gateway != null) {
            gateway.close();
        }
        routers.close();
        if (fleet != null) {
            fleet.close();
        }
    }

    @AfterEach
    void everyAnswerThroughEitherRouterWasA200() throws Exception {
        for (Front front : fronts) {
            assertThat(routers.sample(front.routerPort(), "patchbay_router_responses_total", ""))
                    .as(front.name())
                    .isEqualTo(routers.sample(front.routerPort(), "patchbay_router_responses_total", "code=\"200\""));
        }
    }

    private static double listed(Front front, Server server) {
        try {
            return routers.sample(front.routerPort(), LISTED, "endpoint=\"" + server.address() + "\"");
        } catch (Exception e) {
            return -1;
        }
    }

    /** How many models {@code server}'s own {@code /v1/models} lists now. */
    private static int modelsListedBy(Server server) throws Exception {
        String models = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/models"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        return new ObjectMapper().readTree(models).path("data").size();
    }

    private static HttpRequest completion(int port, String model, int maxTokens) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
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
        Await.until(
                "the servers to count " + requests + " requests",
                () -> {
                    double total = 0;
                    for (Server server : fleet.servers()) {
                        total += since(before, server);
                    }
                    return total == requests;
                },
                () -> fleet.servers().stream()
                        .map(s -> s.name() + " " + since(before, s))
                        .toList());
    }

    /**
     * Returns once the router's data for {@code server} comes from a scrape begun after {@code sinceNanos}, so that a
     * request routed from then on is decided on a page the server wrote after then. The router scrapes an endpoint
     * once at a time, so a scrape that ended after another ended after {@code sinceNanos} began after it.
     */
    private static void awaitScrapeBegunAfter(Front front, Server server, long sinceNanos) {
        awaitScrapeEndedAfter(front, server, awaitScrapeEndedAfter(front, server, sinceNanos));
    }

    /**
     * Waits for the router's data on {@code server} to come from a scrape that ended after {@code sinceNanos}, and
     * returns a moment after that end. The data's age is taken when the router answers, after the question: the
     * question's time less the age is no later than the scrape's end.
     */
    private static long awaitScrapeEndedAfter(Front front, Server server, long sinceNanos) {
        return Await.value(front + " to scrape " + server.name() + " again", () -> {
            try {
                long asked = System.nanoTime();
                double age = routers.sample(
                        front.routerPort(),
                        "patchbay_router_endpoint_data_age_seconds",
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
    @ParameterizedTest(name = "{0}")
    @MethodSource("fronts")
    void requestsForAnAdapterRunningOnASimulatorLandThere(Front front) throws Exception {
        Server home = fleet.sims().getFirst();
        Map<Server, Double> before = successes();
        assertThat(http.send(completion(home.port(), "chat", 1), HttpResponse.BodyHandlers.ofString())
                        .statusCode())
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
        awaitScrapeBegunAfter(front, home, seen);

        int sent = 0;
        while (sent < 8 && !longRequest.isDone()) {
            HttpResponse<String> r =
                    http.send(completion(front.requestPort(), "sql", 2), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            sent++;
        }
        assertThat(longRequest.join().statusCode()).isEqualTo(200);
        System.out.println(front + ": sql requests routed while the long one ran: " + sent);
        assertThat(sent)
                .as("the long request outlasts at least one routed request")
                .isPositive();
        awaitCounted(before, sent + 2);
        assertThat(since(before, home))
                .as("requests " + home.name() + " answered, two of them sent there directly")
                .isEqualTo(sent + 2);
    }

    /**
     * (b) An adapter loaded at run time on one simulator only, through {@code /v1/load_lora_adapter}, becomes a
     * destination once the router has read that simulator's model list, and only there: the other servers would
     * answer 404.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("fronts")
    void anAdapterLoadedAtRunTimeOnOneSimulatorIsSentThereOnly(Front front) throws Exception {
        Server target = fleet.sims().get(1);
        String adapter = "loaded-later-" + fronts.indexOf(front); // each front's own, loaded while it watches
        Map<Server, Double> before = successes();
        fleet.loadAdapter(target, adapter, dir.resolve("sql"));
        int listedThere = modelsListedBy(target);
        Await.until(
                front + " to list " + adapter + " on " + target.name(),
                () -> listed(front, target) == listedThere,
                () -> listed(front, target));

        List<CompletableFuture<HttpResponse<String>>> requests = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            requests.add(
                    http.sendAsync(completion(front.requestPort(), adapter, 4), HttpResponse.BodyHandlers.ofString()));
        }
        for (CompletableFuture<HttpResponse<String>> r : requests) {
            assertThat(r.join().statusCode()).as(r.join().body()).isEqualTo(200);
        }
        awaitCounted(before, 8);
        assertThat(since(before, target))
                .as("requests " + target.name() + " answered")
                .isEqualTo(8);

        // the base model is listed everywhere: any server may take it
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> r = http.send(
                    completion(front.requestPort(), InferenceSimFleet.BASE, 2), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }
}
