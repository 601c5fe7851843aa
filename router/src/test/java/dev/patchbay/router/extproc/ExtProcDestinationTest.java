package dev.patchbay.router.extproc;

import static dev.patchbay.router.extproc.Answered.destination;
import static dev.patchbay.router.extproc.EnvoyFrames.BOTH_MODES;
import static dev.patchbay.router.extproc.EnvoyFrames.BUFFERED;
import static dev.patchbay.router.extproc.EnvoyFrames.FULL_DUPLEX;
import static dev.patchbay.router.extproc.EnvoyFrames.completion;
import static dev.patchbay.router.extproc.EnvoyFrames.whole;
import static dev.patchbay.router.extproc.EnvoyFrames.withSubset;
import static dev.patchbay.router.extproc.EnvoyFrames.withSubsetString;
import static dev.patchbay.router.proxy.FakeModelServer.page;
import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.proxy.FakeModelServer;
import dev.patchbay.router.route.RequestLifecycle;
import dev.patchbay.testkit.Await;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption.HeaderAppendAction;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Where the answer goes: the first-ranked endpoint in the header and the {@code envoy.lb} metadata (the same value),
 * the subset hint that limits them, and the refusals when nothing may be picked.
 */
class ExtProcDestinationTest {
    /** Shortest queue first: the ranking follows the servers' queues, and picks do not change it. */
    private static final String LEAST_QUEUE = "{\"profile\": \"least-queue\"}";

    @AutoClose
    private final ExtProcRoute route = new ExtProcRoute();

    /** Servers whose waiting queues are 0, 1, 2, ...: ranked in that order. */
    private List<FakeModelServer> queues(int count) throws Exception {
        FakeModelServer[] servers = new FakeModelServer[count];
        for (int i = 0; i < count; i++) {
            servers[i] = route.server("q" + i, page(i, 0.1, "sql"));
        }
        return List.of(servers);
    }

    /** Sends {@code headers} and the body as {@code envoy} does and returns the answer carrying the decision. */
    private static ProcessingResponse decide(
            EnvoyStream stream, EnvoyFrames envoy, ProcessingRequest headers, byte[] body) throws InterruptedException {
        if (envoy.fullDuplex()) {
            stream.send(headers, whole(body));
            return stream.next();
        }
        stream.exchange(headers);
        return stream.exchange(whole(body));
    }

    @Test
    void theHeaderAndTheMetadataNameTheFirstRankedEndpointOnly() throws Exception {
        List<FakeModelServer> q = queues(3);
        route.start(LEAST_QUEUE);
        byte[] body = completion("sql");
        for (EnvoyFrames envoy : BOTH_MODES) {
            ProcessingResponse decided = decide(route.stream(), envoy, envoy.post(body), body);
            // One ip:port by default: Envoy's ORIGINAL_DST cluster fails the request on a list.
            assertThat(destination(decided))
                    .as(envoy.toString())
                    .isEqualTo(q.get(0).address());
        }
    }

    @Test
    void withFallbacksTheAnswerNamesThemInRankOrderAndAsksForASlotOnAllButTheLast() throws Exception {
        List<FakeModelServer> q = queues(4);
        String config = "{\"profile\": \"least-queue\", \"flowControl\": {\"slotWait\": \"1s\"}}";
        route.startWith(
                "--endpoints",
                String.join(",", q.stream().map(FakeModelServer::address).toList()),
                "--config",
                route.file("router", ".json", config).toString(),
                "--ext-proc-fallbacks",
                "2");
        Await.until(
                "every endpoint ready",
                () -> route.router().pool().readyStates().size() == 4);
        byte[] body = completion("sql");
        for (EnvoyFrames envoy : BOTH_MODES) {
            ProcessingResponse decided = decide(route.stream(), envoy, envoy.post(body), body);
            assertThat(destination(decided))
                    .as(envoy.toString())
                    .isEqualTo(q.get(0).address() + "," + q.get(1).address() + ","
                            + q.get(2).address());
            assertThat(Answered.header(decided, RequestLifecycle.REQUIRE_SLOT_HEADER))
                    .as("Envoy's first two attempts may be refused for want of a slot, its third not")
                    .isEqualTo("3");
        }
        // The base model needs no slot: the list stands, and a client's own slot demand is taken off.
        byte[] base = completion("base");
        ProcessingResponse decided = decide(route.stream(), FULL_DUPLEX, FULL_DUPLEX.post(base), base);
        assertThat(destination(decided).split(",")).hasSize(3);
        assertThat(Answered.header(decided, RequestLifecycle.REQUIRE_SLOT_HEADER))
                .isNull();
        assertThat(Answered.common(decided).getHeaderMutation().getRemoveHeadersList())
                .contains(RequestLifecycle.REQUIRE_SLOT_HEADER);
    }

    @Test
    void aDestinationTheClientSentIsReplacedNotAppendedTo() throws Exception {
        List<FakeModelServer> q = queues(1);
        route.start(LEAST_QUEUE);
        byte[] body = completion("sql");
        for (EnvoyFrames envoy : BOTH_MODES) {
            ProcessingRequest headers = envoy.post(body, PickerProtocol.DESTINATION_KEY, "10.6.6.6:80");
            ProcessingResponse decided = decide(route.stream(), envoy, headers, body);
            HeaderValueOption set = Answered.option(decided, PickerProtocol.DESTINATION_KEY);
            assertThat(set.getHeader().getRawValue().toStringUtf8())
                    .isEqualTo(q.get(0).address());
            assertThat(set.getAppendAction()).isEqualTo(HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD);
        }
    }

    @Test
    void aRequestWithoutBodyIsRoutedOnItsHeaders() throws Exception {
        List<FakeModelServer> q = queues(2);
        route.start(LEAST_QUEUE);
        for (EnvoyFrames envoy : BOTH_MODES) {
            ProcessingResponse answer = route.stream().exchange(envoy.get("/v1/models"));
            assertThat(answer.hasRequestHeaders()).isTrue();
            assertThat(destination(answer)).isEqualTo(q.get(0).address());
            assertThat(Answered.header(answer, "content-length"))
                    .as("no body, no length")
                    .isNull();
        }
    }

    @Test
    void theSubsetHintLimitsThePickAndItsFallbacksInEitherShape() throws Exception {
        List<FakeModelServer> q = queues(3);
        route.start(LEAST_QUEUE);
        byte[] body = completion("sql");
        for (EnvoyFrames envoy : BOTH_MODES) {
            ProcessingRequest listed =
                    withSubset(envoy.post(body), q.get(2).address(), q.get(1).address());
            assertThat(destination(decide(route.stream(), envoy, listed, body)))
                    .as("a list, " + envoy)
                    .isEqualTo(q.get(1).address());

            ProcessingRequest commaSeparated = withSubsetString(
                    envoy.post(body), "10.9.9.9:8000, " + q.get(2).address());
            assertThat(destination(decide(route.stream(), envoy, commaSeparated, body)))
                    .as("a string, " + envoy)
                    .isEqualTo(q.get(2).address());
        }
        ProcessingResponse noBody = route.stream()
                .exchange(withSubset(FULL_DUPLEX.get("/v1/models"), q.get(1).address()));
        assertThat(destination(noBody)).isEqualTo(q.get(1).address());
    }

    @Test
    void anEmptyHintOrOneWithNoEligibleEndpointIs503() throws Exception {
        List<FakeModelServer> q = queues(2);
        route.start(LEAST_QUEUE);
        byte[] body = completion("sql");
        q.get(1).kill();
        Await.until(
                "the killed server is out",
                () -> route.router().pool().readyStates().size() == 1);
        List<ProcessingRequest> hints = List.of(
                withSubset(BUFFERED.post(body)),
                withSubset(BUFFERED.post(body), "10.9.9.9:8000"),
                withSubset(BUFFERED.post(body), "not an endpoint"),
                withSubset(BUFFERED.post(body), q.get(1).address()));
        for (ProcessingRequest hinted : hints) {
            ProcessingResponse refused = decide(route.stream(), BUFFERED, hinted, body);
            assertThat(Answered.status(refused))
                    .as(hinted.getMetadataContext().toString())
                    .isEqualTo(503);
            assertThat(Answered.error(refused).get("code").asText()).isEqualTo("no_ready_endpoint");
        }
        ProcessingResponse emptyNoBody = route.stream().exchange(withSubset(FULL_DUPLEX.get("/v1/models")));
        assertThat(Answered.status(emptyNoBody)).isEqualTo(503);
        assertThat(destination(decide(route.stream(), BUFFERED, BUFFERED.post(body), body)))
                .as("without a hint the ready one is picked")
                .isEqualTo(q.get(0).address());
    }

    @Test
    void badRequestsAndAnEmptyPoolGetImmediateOpenAiErrors() throws Exception {
        FakeModelServer a = route.server("a", page(0, 0.1, "sql"));
        // With a complete adapter list the router knows "nope" does not exist (without one, the server says 404).
        route.start("{\"adapters\": [\"sql\"]}");

        EnvoyStream unknown = route.stream();
        ProcessingResponse refused =
                decide(unknown, FULL_DUPLEX, FULL_DUPLEX.post(completion("nope")), completion("nope"));
        assertThat(Answered.status(refused)).isEqualTo(400);
        assertThat(Answered.error(refused).get("code").asText()).isEqualTo("model_not_found");
        assertThat(refused.getImmediateResponse()
                        .getHeaders()
                        .getSetHeaders(0)
                        .getHeader()
                        .getRawValue()
                        .toStringUtf8())
                .isEqualTo("application/json");
        assertThat(unknown.awaitEnd())
                .as("the stream ends after an immediate response")
                .isEmpty();

        byte[] notJson = "{not json".getBytes(StandardCharsets.UTF_8);
        assertThat(Answered.status(decide(route.stream(), BUFFERED, BUFFERED.post(notJson), notJson)))
                .isEqualTo(400);

        a.kill();
        Await.until(
                "the dead server goes",
                () -> route.router().pool().readyStates().isEmpty());
        byte[] body = completion("sql");
        assertThat(Answered.status(decide(route.stream(), BUFFERED, BUFFERED.post(body), body)))
                .isEqualTo(503);
        assertThat(route.stream().exchange(BUFFERED.post(body)).hasRequestHeaders())
                .as("the processor kept serving through all of that")
                .isTrue();
    }
}
