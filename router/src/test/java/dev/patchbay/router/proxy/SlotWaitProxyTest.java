package dev.patchbay.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.ServedModels;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The patchbay profile's slot wait through the real HTTP proxy: an adapter request that no server has a slot for
 * waits in the router and goes to the first server that shows one free.
 */
class SlotWaitProxyTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final RouterConfig SLOT_WAIT = slotWait();
    private final List<AutoCloseable> open = new ArrayList<>();

    private static RouterConfig slotWait() {
        try {
            return RouterConfig.parse("{\"profile\": \"patchbay\"}");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : open.reversed()) {
            c.close();
        }
    }

    private FakeModelServer server(String name, String page) throws Exception {
        FakeModelServer server = new FakeModelServer(name, page);
        open.add(server);
        return server;
    }

    private CompletableFuture<HttpResponse<String>> completeAsync(RouterHarness router, String model) {
        HttpRequest request = router.request("/v1/completions")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model + "\",\"prompt\":\"hi\"}"))
                .header("Content-Type", "application/json")
                .build();
        return router.client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aRequestWithNoSlotAnywhereWaitsAndGoesWhereASlotFreesFirst() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.allSlotsBusy("a"));
        FakeModelServer b = server("b", FakeModelServer.allSlotsBusy("b"));
        RouterHarness router = RouterHarness.over(SLOT_WAIT, a, b);
        open.add(router);
        router.awaitReady(2);

        CompletableFuture<HttpResponse<String>> waiting = completeAsync(router, "sql");
        RouterHarness.await(
                "the request waits for a slot", () -> router.router.lifecycle().waitingForSlot() == 1);
        assertThat(a.completions.get() + b.completions.get())
                .as("sent nowhere yet")
                .isZero();
        assertThat(router.get("/metrics").body()).contains("patchbay_router_requests_waiting_for_slot 1.0");

        b.metricsPage = FakeModelServer.page(0, 0.1, "b1", "b2", "b3"); // a slot frees on b
        HttpResponse<String> response = waiting.get();
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(response.body()).path("served_by").asText()).isEqualTo("b");
        assertThat(a.completions.get()).isZero();
        assertThat(router.router.lifecycle().waitingForSlot()).isZero();
        assertThat(router.router.lifecycle().waitedForSlot()).isEqualTo(1);
        // The send recorded when the request was released is the one the proxy ended: nothing stays counted.
        Endpoint atB = Endpoint.parse(b.address());
        RouterHarness.await(
                "the answer's end is booked",
                () -> router.router.pool().readyStates().stream()
                        .filter(s -> s.endpoint().equals(atB))
                        .allMatch(s -> s.metrics().waitingRequests() == 0
                                && s.metrics().runningRequests() == 0
                                && !s.metrics().adapterRunning().containsKey("sql")));
        assertThat(router.router.pool().promptTokensInFlight(atB)).isZero();
    }

    @Test
    void aRequestGoesOutAfterTheLongestWaitWhenNoSlotFrees() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.allSlotsBusy("a"));
        RouterHarness router = RouterHarness.over(SLOT_WAIT, a);
        open.add(router);
        router.awaitReady(1);

        HttpResponse<String> response = router.complete("sql");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(a.models).containsExactly("sql");
        assertThat(router.router.lifecycle().waitingForSlot()).isZero();
        assertThat(router.router.lifecycle().waitedForSlot()).isEqualTo(1);
        assertThat(router.get("/metrics").body()).contains("patchbay_router_requests_waiting_for_slot 0.0");
    }

    @Test
    void requestsThatNeedNoSlotNeverWait() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.allSlotsBusy("a"));
        RouterHarness router = RouterHarness.over(SLOT_WAIT, a);
        open.add(router);
        router.awaitReady(1);
        CompletableFuture<HttpResponse<String>> inSlot = completeAsync(router, "a1");
        assertThat(inSlot.get().statusCode()).isEqualTo(200);
        assertThat(router.get("/v1/models").statusCode()).isEqualTo(200);
        assertThat(a.models).containsExactly("a1");
        assertThat(router.router.lifecycle().waitedForSlot()).isZero();
    }

    @Test
    void aRequestAServerRefusesForWantOfASlotWaitsAgainAndGoesWhereOneFrees() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "a1", "a2", "a3")); // one slot free
        FakeModelServer b = server("b", FakeModelServer.allSlotsBusy("b"));
        a.refuseSlotRequests = true; // another router's request took it
        a.pageAfterRefusal = FakeModelServer.allSlotsBusy("a"); // and a's page then shows it taken
        // A wait longer than any test's pauses, so the request waits until b frees a slot.
        RouterHarness router = RouterHarness.over(
                RouterConfig.parse("{\"profile\": \"patchbay\", \"flowControl\": {\"slotWait\": \"60s\"}}"), a, b);
        open.add(router);
        router.awaitReady(2);

        CompletableFuture<HttpResponse<String>> answer = completeAsync(router, "sql");
        RouterHarness.await(
                "the refused request waits in the router",
                () -> router.router.lifecycle().slotRefusals() >= 1
                        && router.router.lifecycle().waitingForSlot() == 1);
        assertThat(a.askedForSlot).isNotEmpty().allMatch(asked -> asked);
        assertThat(router.get("/metrics").body()).contains("patchbay_router_slot_refusals_total");

        b.metricsPage = FakeModelServer.page(0, 0.1, "b1", "b2", "b3"); // a slot frees on b
        HttpResponse<String> response = answer.get();
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(response.body()).path("served_by").asText()).isEqualTo("b");
        assertThat(b.askedForSlot).containsExactly(true);
        assertThat(a.completions.get()).isZero();
        assertThat(router.router.lifecycle().slotRefusals()).isEqualTo(a.askedForSlot.size());
        Endpoint atA = Endpoint.parse(a.address());
        RouterHarness.await(
                "the refused sends are booked as ended",
                () -> router.router.pool().readyStates().stream()
                        .filter(s -> s.endpoint().equals(atA))
                        .allMatch(s -> !s.metrics().adapterWaiting().containsKey("sql")));
    }

    @Test
    void aRequestRefusedUntilItsWaitEndsGoesOutWithoutAskingForASlot() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "a1", "a2", "a3"));
        a.refuseSlotRequests = true; // its page never catches up
        RouterHarness router = RouterHarness.over(SLOT_WAIT, a);
        open.add(router);
        router.awaitReady(1);

        HttpResponse<String> response = router.complete("sql");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(a.models).containsExactly("sql");
        assertThat(a.askedForSlot.getLast())
                .as("the last send, past the longest wait")
                .isFalse();
        assertThat(a.askedForSlot.subList(0, a.askedForSlot.size() - 1))
                .isNotEmpty()
                .allMatch(asked -> asked);
        assertThat(router.router.lifecycle().slotRefusals()).isEqualTo(a.askedForSlot.size() - 1);
        assertThat(router.router.lifecycle().waitingForSlot()).isZero();
    }

    @Test
    void baseModelRequestsNeverAskForASlot() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "a1"));
        a.refuseSlotRequests = true;
        a.listed = List.of("base", "a1");
        RouterHarness router = RouterHarness.over(SLOT_WAIT, a);
        open.add(router);
        router.awaitReady(1);
        RouterHarness.await(
                "the model list is read",
                () -> router.router.pool().servedModels().values().stream().allMatch(ServedModels::known));

        assertThat(router.complete("base").statusCode()).isEqualTo(200);
        assertThat(a.askedForSlot).containsExactly(false);
    }
}
