package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.patchbay.launcher.gateway.EnvoyConfig;
import dev.patchbay.launcher.gateway.EnvoyProcess;
import dev.patchbay.router.Router;
import dev.patchbay.router.RouterOptions;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointSource;
import dev.patchbay.testkit.Await;
import dev.patchbay.testkit.HttpAnswers;
import dev.patchbay.testkit.RequiredTool;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The picker's fallback list through a real Envoy running {@code deploy/envoy/envoy.yaml} in front of two picker
 * replicas: a picker names two servers, the first refuses the request for want of a batch slot, and Envoy's retry takes it to the second, which
 * the picker then books it against. The servers are stand-ins that refuse every attempt before the last the picker
 * allows, so whichever the picker ranks first refuses; what they saw of each attempt is what is checked.
 */
class EnvoyFallbackTest {
    @TempDir
    static Path dir;

    static final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    static final List<SlotlessServer> servers = new CopyOnWriteArrayList<>();
    /** Two replicas of the picker, as a Kubernetes Service spreads Envoy's streams over the picker's pods. */
    static final List<Router> pickers = new CopyOnWriteArrayList<>();

    static EnvoyProcess envoy;
    static int envoyPort;

    @BeforeAll
    static void start() throws Exception {
        servers.add(new SlotlessServer("s0"));
        servers.add(new SlotlessServer("s1"));
        List<Endpoint> pool = servers.stream().map(SlotlessServer::endpoint).toList();
        for (int i = 0; i < 2; i++) {
            pickers.add(new Router(RouterOptions.builder(EndpointSource.of(pool))
                            .extProcPort(0)
                            .healthPort(0)
                            .extProcFallbacks(1)
                            .build())
                    .start());
        }
        Path config = dir.resolve("envoy.yaml");
        Files.writeString(
                config,
                EnvoyConfig.render(new EnvoyConfig.Gateway(
                        "127.0.0.1",
                        0,
                        0,
                        pickers.stream()
                                .map(p -> new EnvoyConfig.Picker(
                                        new Endpoint("127.0.0.1", p.extProcPort()), p.healthPort()))
                                .toList(),
                        EnvoyConfig.FailureMode.FAIL_CLOSE,
                        pool)));
        envoy = EnvoyProcess.start(RequiredTool.thirdParty("envoy"), config, dir.resolve("envoy.log"), "info");
        envoyPort = envoy.listenerPort("gateway");
        // FailClose answers 503 until Envoy's health checks have seen a picker; the test wants both.
        Await.until("Envoy finds both pickers healthy", () -> unchecked(() -> envoy.clusterHealthy("picker")));
        Await.until(
                "Envoy routes through the picker",
                () -> unchecked(() -> post(completion("base", "hi"))).statusCode() == 200);
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (envoy != null) envoy.close();
        pickers.forEach(Router::stop);
        servers.forEach(SlotlessServer::close);
    }

    @BeforeEach
    void forgetEarlierAttempts() {
        servers.forEach(s -> {
            s.attempts.clear();
            s.bodyBytes.clear();
        });
    }

    @Test
    void aRequestTheFirstServerRefusesForWantOfASlotIsServedByTheFallbackAndBookedThere() throws Exception {
        double[] picksBefore = picks();
        HttpResponse<String> response = post(completion("a0", "hi"));

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        SlotlessServer refused = servers.stream()
                .filter(s -> s.attempts.contains(new Attempt("2", "1", false)))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no server refused the first attempt: " + attempts()));
        SlotlessServer fallback = servers.get(1 - servers.indexOf(refused));
        assertThat(refused.attempts).containsExactly(new Attempt("2", "1", false));
        assertThat(fallback.attempts).containsExactly(new Attempt("2", "2", true));
        assertThat(response.body()).contains(fallback.name);

        int f = servers.indexOf(fallback);
        Await.until(
                "the picker books the request where it was served",
                () -> unchecked(EnvoyFallbackTest::picks)[f] == picksBefore[f] + 1);
        assertThat(picks()[1 - f])
                .as("nothing booked at the server that refused")
                .isEqualTo(picksBefore[1 - f]);
    }

    @Test
    void envoySpreadsRequestsOverThePickerReplicas() throws Exception {
        double[] before = pickerTotals();
        for (int i = 0; i < 10; i++) {
            assertThat(post(completion("base", "hi")).statusCode()).isEqualTo(200);
        }
        Await.until("each replica booked some of the ten", () -> {
            double[] now = unchecked(EnvoyFallbackTest::pickerTotals);
            return now[0] > before[0] && now[1] > before[1] && now[0] + now[1] == before[0] + before[1] + 10;
        });
    }

    @Test
    void aLargeBodyIsRetriedWhole() throws Exception {
        String prompt = "x".repeat(1 << 20);
        HttpResponse<String> response = post(completion("a0", prompt));

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        List<Attempt> all = attempts();
        assertThat(all).hasSize(2);
        assertThat(all).filteredOn(Attempt::served).containsExactly(new Attempt("2", "2", true));
        assertThat(servers).allSatisfy(s -> assertThat(s.bodyBytes).allMatch(n -> n > 1 << 20));
    }

    @Test
    void aBaseModelRequestAsksForNoSlotAndGoesOnceToTheFirstChoice() throws Exception {
        HttpResponse<String> response = post(completion("base", "hi"));

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(attempts()).containsExactly(new Attempt("", "1", true));
    }

    interface Call<T> {
        T call() throws Exception;
    }

    private static <T> T unchecked(Call<T> call) {
        try {
            return call.call();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<Attempt> attempts() {
        return servers.stream().flatMap(s -> s.attempts.stream()).toList();
    }

    private static String completion(String model, String prompt) {
        return "{\"model\":\"" + model + "\",\"prompt\":\"" + prompt + "\",\"max_tokens\":2}";
    }

    private static HttpResponse<String> post(String body) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + envoyPort + "/v1/completions"))
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** {@code patchbay_router_picks_total} per server, in pool order, summed over the pickers' {@code /metrics}. */
    private static double[] picks() throws IOException, InterruptedException {
        double[] picks = new double[servers.size()];
        for (Router picker : pickers) {
            String page = metricsOf(picker);
            for (int i = 0; i < picks.length; i++) {
                picks[i] += picksOf(page, servers.get(i).endpoint());
            }
        }
        return picks;
    }

    /** Each picker's picks over every server, in picker order. */
    private static double[] pickerTotals() throws IOException, InterruptedException {
        double[] totals = new double[pickers.size()];
        for (int p = 0; p < totals.length; p++) {
            String page = metricsOf(pickers.get(p));
            for (SlotlessServer server : servers) {
                totals[p] += picksOf(page, server.endpoint());
            }
        }
        return totals;
    }

    private static String metricsOf(Router picker) throws IOException, InterruptedException {
        return http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + picker.port() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    private static double picksOf(String page, Endpoint server) {
        Matcher m = Pattern.compile("(?m)^patchbay_router_picks_total\\{endpoint=\"" + Pattern.quote(server.address())
                        + "\"} (\\S+)$")
                .matcher(page);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    /** What a server saw of one attempt: the picker's slot demand, Envoy's attempt count, and whether it served. */
    record Attempt(String requireSlot, String attemptCount, boolean served) {}

    /**
     * A model server whose batch slots are all taken by requests the picker has not seen yet: it shows a free slot on
     * its page, and refuses a request that asks for a slot on every attempt but the last, as a Patchbay server does.
     */
    static final class SlotlessServer implements AutoCloseable {
        static final String PAGE = """
                # TYPE vllm:num_requests_waiting gauge
                vllm:num_requests_waiting{engine="0",model_name="base"} 0
                vllm:num_requests_running{engine="0",model_name="base"} 0
                vllm:kv_cache_usage_perc{engine="0",model_name="base"} 0.1
                vllm:max_gpu_lora_adapters{engine="0",model_name="base"} 4
                vllm:num_gpu_loaded_lora_adapters{engine="0",model_name="base"} 1
                vllm:lora_adapter_loaded{engine="0",level="gpu",lora_name="a0",model_name="base",pinned="false",rank="8"} 1
                """;

        final String name;
        final List<Attempt> attempts = new CopyOnWriteArrayList<>();
        final List<Integer> bodyBytes = new CopyOnWriteArrayList<>();
        private final HttpServer server;

        SlotlessServer(String name) throws IOException {
            this.name = name;
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
            server.createContext("/metrics", x -> HttpAnswers.send(x, 200, "text/plain", PAGE));
            server.createContext("/v1/completions", this::complete);
            server.createContext("/", x -> HttpAnswers.send(x, 404, "application/json", "{}"));
            server.start();
        }

        Endpoint endpoint() {
            return new Endpoint("127.0.0.1", server.getAddress().getPort());
        }

        private void complete(HttpExchange exchange) throws IOException {
            bodyBytes.add(exchange.getRequestBody().readAllBytes().length);
            String required = header(exchange, "x-patchbay-require-slot");
            String attempt = header(exchange, "x-envoy-attempt-count");
            boolean refuse = required.matches("\\d+")
                    && attempt.matches("\\d+")
                    && Integer.parseInt(attempt) < Integer.parseInt(required);
            attempts.add(new Attempt(required, attempt, !refuse));
            if (refuse) {
                exchange.getResponseHeaders().add("x-patchbay-slot-refused", "true");
                HttpAnswers.send(exchange, 503, "application/json", "{\"error\":{\"message\":\"no slot\"}}");
            } else {
                HttpAnswers.send(exchange, 200, "application/json", "{\"served_by\":\"" + name + "\"}");
            }
        }

        private static String header(HttpExchange exchange, String name) {
            String value = exchange.getRequestHeaders().getFirst(name);
            return value == null ? "" : value;
        }

        @Override
        public String toString() {
            return name;
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }
}
