package dev.patchbay.router.extproc;

import static dev.patchbay.router.extproc.Answered.destination;
import static dev.patchbay.router.extproc.EnvoyFrames.BUFFERED;
import static dev.patchbay.router.extproc.EnvoyFrames.FULL_DUPLEX;
import static dev.patchbay.router.extproc.EnvoyFrames.completion;
import static dev.patchbay.router.extproc.EnvoyFrames.whole;
import static dev.patchbay.router.proxy.FakeModelServer.page;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.router.proxy.FakeModelServer;
import dev.patchbay.router.route.RequestLifecycle;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * 429 for a sheddable request when every server is saturated. Sheddable as the gateway has it: an
 * {@code x-gateway-inference-objective} whose priority is negative; or Patchbay's own {@code x-patchbay-sheddable}.
 */
class ExtProcSheddingTest {
    /** Queue over 5 and KV cache over 0.8: saturated by the default thresholds. */
    private static final String SATURATED = page(20, 0.95, "sql");

    private static final String OBJECTIVES = "{\"objectives\": {\"batch\": -1, \"chat\": 0, \"premium\": 5}}";

    @AutoClose
    private final ExtProcRoute route = new ExtProcRoute();

    private ProcessingResponse buffered(String... headers) throws InterruptedException {
        byte[] body = completion("sql");
        EnvoyStream stream = route.stream();
        stream.exchange(BUFFERED.post(body, headers));
        return stream.exchange(whole(body));
    }

    @Test
    void sheddableRequestsAre429WhenEveryServerIsSaturatedAndOthersStillGetAServer() throws Exception {
        FakeModelServer a = route.server("a", SATURATED);
        route.start(OBJECTIVES);
        for (String[] sheddable : new String[][] {
            {RequestLifecycle.OBJECTIVE_HEADER, "batch"}, {RequestLifecycle.SHEDDABLE_HEADER, "true"}
        }) {
            ProcessingResponse refused = buffered(sheddable);
            assertThat(Answered.status(refused)).as(sheddable[0]).isEqualTo(429);
            JsonNode error = Answered.error(refused);
            assertThat(error.get("type").asText()).isEqualTo("rate_limit_error");
            assertThat(error.get("code").asText()).isEqualTo("pool_saturated");
        }
        for (String[] kept : new String[][] {
            {},
            {RequestLifecycle.OBJECTIVE_HEADER, "chat"},
            {RequestLifecycle.OBJECTIVE_HEADER, "premium"},
            {RequestLifecycle.OBJECTIVE_HEADER, "unconfigured"},
            {RequestLifecycle.SHEDDABLE_HEADER, "false"}
        }) {
            assertThat(destination(buffered(kept))).as(String.join(": ", kept)).isEqualTo(a.address());
        }
        assertThat(route.metric("patchbay_router_responses_total{code=\"429\"}"))
                .isEqualTo(2);
    }

    @Test
    void aSheddableRequestGoesWhereThereIsRoomWhileAnyServerHasIt() throws Exception {
        route.server("full", SATURATED);
        FakeModelServer room = route.server("room", page(0, 0.1, "sql"));
        route.start(OBJECTIVES);
        assertThat(destination(buffered(RequestLifecycle.OBJECTIVE_HEADER, "batch"))
                        .split(",")[0])
                .isEqualTo(room.address());
    }

    @Test
    void inFullDuplexModeThe429IsTheFirstAnswerOnceTheBodyIsIn() throws Exception {
        route.server("a", SATURATED);
        route.start(OBJECTIVES);
        byte[] body = completion("sql");
        EnvoyStream stream = route.stream();
        stream.send(FULL_DUPLEX.post(body, RequestLifecycle.OBJECTIVE_HEADER, "batch"));
        stream.send(EnvoyFrames.chunks(body, 7, 40));
        assertThat(Answered.status(stream.next())).isEqualTo(429);
        assertThat(stream.awaitEnd()).as("nothing after the immediate response").isEmpty();
    }
}
