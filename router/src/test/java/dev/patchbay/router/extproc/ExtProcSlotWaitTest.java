package dev.patchbay.router.extproc;

import static dev.patchbay.router.extproc.Answered.destination;
import static dev.patchbay.router.extproc.EnvoyFrames.BUFFERED;
import static dev.patchbay.router.extproc.EnvoyFrames.FULL_DUPLEX;
import static dev.patchbay.router.extproc.EnvoyFrames.completion;
import static dev.patchbay.router.extproc.EnvoyFrames.whole;
import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.proxy.FakeModelServer;
import dev.patchbay.testkit.Await;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The patchbay profile's slot wait through the external processor: Envoy's request waits for its answer while no
 * endpoint has a slot for the adapter, and the answer names the endpoint that frees one first.
 */
class ExtProcSlotWaitTest {
    @AutoClose
    private final ExtProcRoute route = new ExtProcRoute();

    @Test
    void theDecisionWaitsForASlotInBothBodyModes() throws Exception {
        FakeModelServer a = route.server("a", FakeModelServer.allSlotsBusy("a"));
        FakeModelServer b = route.server("b", FakeModelServer.allSlotsBusy("b"));
        route.start("{\"profile\": \"patchbay\"}");
        byte[] body = completion("sql");

        EnvoyStream fullDuplex = route.stream();
        fullDuplex.send(FULL_DUPLEX.post(body), whole(body));
        Await.until(
                "the full-duplex request waits",
                () -> route.router().lifecycle().waitingForSlot() == 1);
        b.metricsPage = FakeModelServer.page(0, 0.1, "b1", "b2", "b3");
        ProcessingResponse decided = fullDuplex.next();
        assertThat(destination(decided)).startsWith(b.address());

        b.metricsPage = FakeModelServer.allSlotsBusy("b");
        Await.until(
                "b's page is busy again",
                () -> route.router().pool().readyStates().stream()
                        .allMatch(s -> s.metrics().adapterRunning().size() == 4));
        // Another adapter: one for sql would join the first request's queue on b and need no slot of its own.
        byte[] other = completion("chat");
        EnvoyStream buffered = route.stream();
        buffered.exchange(BUFFERED.post(other)); // the headers go on at once; the body's answer carries the decision
        buffered.send(whole(other));
        Await.until(
                "the buffered request waits", () -> route.router().lifecycle().waitingForSlot() == 1);
        a.metricsPage = FakeModelServer.page(0, 0.1, "a1");
        assertThat(destination(buffered.next())).startsWith(a.address());
        assertThat(route.router().lifecycle().waitedForSlot()).isEqualTo(2);
    }
}
