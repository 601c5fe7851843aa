package dev.patchbay.router.extproc;

import static dev.patchbay.router.extproc.Answered.destination;
import static dev.patchbay.router.extproc.EnvoyFrames.BUFFERED;
import static dev.patchbay.router.extproc.EnvoyFrames.FULL_DUPLEX;
import static dev.patchbay.router.extproc.EnvoyFrames.completion;
import static dev.patchbay.router.extproc.EnvoyFrames.responseBody;
import static dev.patchbay.router.extproc.EnvoyFrames.responseHeaders;
import static dev.patchbay.router.extproc.EnvoyFrames.servedBy;
import static dev.patchbay.router.extproc.EnvoyFrames.whole;
import static dev.patchbay.router.proxy.FakeModelServer.page;
import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.proxy.FakeModelServer;
import dev.patchbay.testkit.Await;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The endpoint the data plane reports served a response ({@code x-gateway-destination-endpoint-served} in
 * {@code metadata_context}) is where the router books the request: its pick count and its place in the tally.
 */
class ExtProcServedEndpointTest {
    private static final String LEAST_QUEUE = "{\"profile\": \"least-queue\"}";

    @AutoClose
    private final ExtProcRoute route = new ExtProcRoute();

    private final List<FakeModelServer> servers = new ArrayList<>();

    /** Servers with waiting queues 0, 1, 2, ... (ranked in that order), routed with the least-queue profile. */
    private void start(int count) throws Exception {
        for (int i = 0; i < count; i++) {
            servers.add(route.server("q" + i, page(i, 0.1, "sql")));
        }
        route.start(LEAST_QUEUE);
    }

    /** A decided full-duplex request, its body answered; the response has not begun. */
    private EnvoyStream sentRequest() throws InterruptedException {
        byte[] body = completion("sql");
        EnvoyStream stream = route.stream();
        stream.send(FULL_DUPLEX.post(body), whole(body));
        assertThat(destination(stream.next())).isEqualTo(servers.getFirst().address());
        stream.streamedBody();
        return stream;
    }

    @Test
    void aFallbackThatServedGetsThePickAndThePromptLeavesTheFirstRanked() throws Exception {
        start(2);
        FakeModelServer first = servers.get(0);
        FakeModelServer fallback = servers.get(1);
        EnvoyStream stream = sentRequest();
        assertThat(route.promptTokensInFlight(first))
                .as("sent to the first-ranked first")
                .isPositive();
        assertThat(route.picks(first) + route.picks(fallback))
                .as("booked once the served endpoint is known")
                .isZero();

        assertThat(stream.exchange(responseHeaders(200, fallback.address())).hasResponseHeaders())
                .isTrue();
        assertThat(route.picks(fallback)).isEqualTo(1);
        assertThat(route.picks(first)).isZero();
        assertThat(route.promptTokensInFlight(first)).isZero();
        assertThat(route.promptTokensInFlight(fallback))
                .as("answering: its prefill is done")
                .isZero();
        assertThat(route.metric("patchbay_router_responses_total{code=\"200\"}"))
                .isEqualTo(1);

        stream.exchange(responseBody("{}", true));
        stream.complete();
        stream.awaitEnd();
        assertThat(route.picks(fallback))
                .as("booked once, not again at the end")
                .isEqualTo(1);
    }

    @Test
    void withoutAReportTheFirstRankedGetsThePick() throws Exception {
        start(2);
        EnvoyStream stream = sentRequest();
        stream.exchange(responseHeaders(200));
        assertThat(route.picks(servers.get(0))).isEqualTo(1);
        assertThat(route.picks(servers.get(1))).isZero();
        assertThat(route.promptTokensInFlight(servers.get(0))).isZero();
    }

    @Test
    void anEndpointOutsideTheOfferedListThatServedGetsThePick() throws Exception {
        start(2); // one named: the other left off the list
        FakeModelServer notOffered = servers.getLast(); // the longest queue: left off the list
        EnvoyStream stream = sentRequest();
        stream.exchange(responseHeaders(200, notOffered.address())); // the data plane's own fallback chose it
        assertThat(route.picks(notOffered)).isEqualTo(1);
        assertThat(route.picks(servers.getFirst())).isZero();
    }

    @Test
    void aReportNamingNoPoolEndpointLeavesThePickWithTheFirstRanked() throws Exception {
        start(2);
        EnvoyStream stream = sentRequest();
        stream.exchange(responseHeaders(200, "10.9.9.9:8000"));
        assertThat(route.picks(servers.get(0))).isEqualTo(1);
        assertThat(route.promptTokensInFlight(servers.get(0))).isZero();
    }

    @Test
    void aReportOnTheFirstBodyMessageCountsWhenResponseHeadersAreNotSent() throws Exception {
        start(2);
        EnvoyStream stream = sentRequest();
        stream.exchange(
                servedBy(responseBody("data: {}\n\n", false), servers.get(1).address()));
        assertThat(route.picks(servers.get(1))).isEqualTo(1);
        stream.exchange(
                servedBy(responseBody("data: [DONE]\n\n", true), servers.get(0).address()));
        assertThat(route.picks(servers.get(0)))
                .as("only the first response message reports")
                .isZero();
    }

    @Test
    void aStreamThatEndsBeforeAnyResponseIsBookedOnceWhereItWasSent() throws Exception {
        start(2);
        FakeModelServer first = servers.getFirst();
        EnvoyStream dropped = sentRequest();
        dropped.cancel();
        Await.until("the dropped stream's prompt leaves the tally", () -> route.promptTokensInFlight(first) == 0);
        Await.until("the dropped stream is booked", () -> picks(first) == 1);

        byte[] body = completion("sql");
        EnvoyStream buffered = route.stream();
        buffered.exchange(BUFFERED.post(body));
        buffered.exchange(whole(body));
        buffered.complete();
        buffered.awaitEnd();
        assertThat(route.picks(first)).isEqualTo(2);
        assertThat(route.promptTokensInFlight(first)).isZero();
    }

    private double picks(FakeModelServer server) {
        try {
            return route.picks(server);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
