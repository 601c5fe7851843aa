package dev.patchbay.router.route;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.router.config.ModelRewriter;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.EndpointSource;
import dev.patchbay.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The decision path without any HTTP, as an Envoy external processor would use it. */
class RequestLifecycleTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PAGE = """
            vllm:num_requests_waiting{model_name="base"} 9
            vllm:num_requests_running{model_name="base"} 0
            vllm:kv_cache_usage_perc{model_name="base"} 0.95
            vllm:lora_requests_info{max_lora="2",running_lora_adapters="sql",waiting_lora_adapters=""} 5
            """;
    private static final Function<String, Optional<String>> NO_HEADERS = name -> Optional.empty();

    private final EndpointPool pool = new EndpointPool(
            EndpointSource.of(List.of(new Endpoint("127.0.0.1", 9001))),
            e -> PAGE,
            Duration.ofSeconds(10),
            Duration.ofSeconds(30),
            e -> {});

    @AfterEach
    void close() {
        pool.close();
    }

    private RequestLifecycle decider(String configJson) throws Exception {
        RouterConfig config = RouterConfig.parse(configJson);
        Random random = new Random(3);
        pool.tick();
        Await.until("the endpoint ready", () -> pool.readyStates().size() == 1);
        return new RequestLifecycle(
                pool,
                config.profileDefinition().create(random, System::nanoTime),
                config,
                new ModelRewriter(config.rewrites(), random));
    }

    private static byte[] body(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void rewritesTheBodyAndPicks() throws Exception {
        RequestLifecycle decider = decider("""
                {"rewrites": [{"model": "public", "targets": [{"model": "sql", "weight": 1}]}]}""");
        RouteDecision decision =
                decider.decide(body("{\"model\":\"public\",\"prompt\":\"p\",\"max_tokens\":3}"), NO_HEADERS);
        assertThat(decision.refused()).isFalse();
        assertThat(decision.rewritten()).isTrue();
        assertThat(decision.request().model()).isEqualTo("sql");
        assertThat(decision.request().baseModel()).isFalse();
        assertThat(JSON.readTree(decision.body()).path("model").asText()).isEqualTo("sql");
        assertThat(JSON.readTree(decision.body()).path("max_tokens").asInt()).isEqualTo(3);
        assertThat(decision.ranked()).extracting(s -> s.endpoint().port()).containsExactly(9001);
    }

    @Test
    void patchbayCountsItsRequestsUntilTheNextScrapeAndTheGatewayProfilesDoNot() throws Exception {
        RequestLifecycle patchbay = decider("{\"profile\": \"patchbay\"}");
        byte[] request = body("{\"model\":\"sql\",\"prompt\":\"p\"}");
        RouteDecision first = patchbay.decide(request, NO_HEADERS);
        RouteDecision second = patchbay.decide(request, NO_HEADERS);
        // Each decision records its send at once, and patchbay's own-picks-counter counts it.
        assertThat(pool.readyStates().getFirst().metrics().waitingRequests()).isEqualTo(11);
        assertThat(pool.readyStates().getFirst().metrics().waitingAdapters()).contains("sql");
        RouteDecision models = patchbay.decideWithoutModel();
        assertThat(pool.readyStates().getFirst().metrics().waitingRequests())
                .as("the model list costs nothing")
                .isEqualTo(11);
        models.send().finished();
        first.send().finished(); // answered before any scrape: on no server's page any more
        assertThat(pool.readyStates().getFirst().metrics().waitingRequests()).isEqualTo(10);
        second.send().finished();

        pool.tick(); // a fresh scrape replaces the guess
        Await.until("rescraped", () -> pool.readyStates().getFirst().metrics().waitingRequests() == 9);
        RequestLifecycle gateway = decider("{\"profile\": \"gie-lora\"}");
        RouteDecision viaGateway = gateway.decide(request, NO_HEADERS);
        assertThat(viaGateway.send().endpoint())
                .isEqualTo(viaGateway.ranked().getFirst().endpoint());
        assertThat(pool.readyStates().getFirst().metrics().waitingRequests()).isEqualTo(9);
        viaGateway.send().finished();
    }

    @Test
    void keepsTheOriginalBodyWhenNothingIsRewritten() throws Exception {
        byte[] original = body("{\"model\":\"base\",\"prompt\":\"p\"}");
        RouteDecision decision = decider("{}").decide(original, NO_HEADERS);
        assertThat(decision.body()).isSameAs(original);
        assertThat(decision.request().baseModel()).isTrue();
    }

    @Test
    void shedsMarkedRequestsOnASaturatedPool() throws Exception {
        RequestLifecycle decider = decider("{\"objectives\": {\"batch\": -1}}");
        byte[] request = body("{\"model\":\"sql\"}");
        assertThat(decider.decide(
                                request,
                                name -> Optional.ofNullable(
                                        Map.of("x-patchbay-sheddable", "true").get(name)))
                        .error()
                        .status())
                .isEqualTo(429);
        assertThat(decider.decide(
                                request,
                                name -> Optional.ofNullable(Map.of("x-gateway-inference-objective", "batch")
                                        .get(name)))
                        .error()
                        .status())
                .isEqualTo(429);
        assertThat(decider.decide(request, NO_HEADERS).refused()).isFalse();
    }

    @Test
    void refusesUnknownModelsOnlyWithAClosedAdapterList() throws Exception {
        assertThat(decider("{\"adapters\": [\"chat\"]}")
                        .decide(body("{\"model\":\"typo\"}"), NO_HEADERS)
                        .error()
                        .code())
                .isEqualTo("model_not_found");
        assertThat(decider("{\"adapters\": [\"chat\"]}")
                        .decide(body("{\"model\":\"sql\"}"), NO_HEADERS)
                        .refused())
                .isFalse();
        assertThat(decider("{}")
                        .decide(body("{\"model\":\"typo\"}"), NO_HEADERS)
                        .refused())
                .isFalse();
    }
}
