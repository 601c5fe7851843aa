package dev.patchbay.router.extproc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which endpoints an answer names: the fallbacks a slot refusal may be retried on. */
class PickerProtocolTest {
    private static final EndpointMetrics IN_SLOT = EndpointMetrics.builder()
            .slots(2, 1)
            .resident("sql", AdapterResidency.IN_SLOT)
            .build();
    private static final EndpointMetrics IN_HOST = EndpointMetrics.builder()
            .slots(2, 0)
            .resident("sql", AdapterResidency.IN_HOST)
            .build();
    /** A free slot, the adapter not there: it would be loaded from storage. */
    private static final EndpointMetrics FREE_SLOT =
            EndpointMetrics.builder().slots(2, 0).build();
    /** Both slots busy with other adapters' requests. */
    private static final EndpointMetrics ALL_BUSY = EndpointMetrics.builder()
            .slots(2, 2)
            .resident("x", AdapterResidency.IN_SLOT)
            .resident("y", AdapterResidency.IN_SLOT)
            .adapterRunning("x", 1)
            .adapterRunning("y", 1)
            .build();

    private static EndpointState at(int port, EndpointMetrics metrics) {
        return new EndpointState(new Endpoint("127.0.0.1", port), metrics);
    }

    private static List<Integer> ports(List<EndpointState> offered) {
        return offered.stream().map(s -> s.endpoint().port()).toList();
    }

    @Test
    void aSlotRefusalIsRetriedOnlyWhereTheAdapterCostsNoMoreThanAtTheFirstChoice() {
        List<EndpointState> ranked =
                List.of(at(1, IN_HOST), at(2, FREE_SLOT), at(3, ALL_BUSY), at(4, IN_SLOT), at(5, IN_HOST));
        assertThat(ports(PickerProtocol.offeredForSlot(ranked, 3, "sql")))
                .as("no storage load, no full server: only where sql is in memory")
                .containsExactly(1, 4, 5);
        assertThat(ports(PickerProtocol.offeredForSlot(ranked, 1, "sql"))).containsExactly(1, 4);
        assertThat(ports(PickerProtocol.offeredForSlot(ranked, 0, "sql"))).containsExactly(1);

        List<EndpointState> firstNeedsALoad = List.of(at(1, FREE_SLOT), at(2, ALL_BUSY), at(3, FREE_SLOT));
        assertThat(ports(PickerProtocol.offeredForSlot(firstNeedsALoad, 2, "sql")))
                .as("a load at the first choice: a load elsewhere costs the same")
                .containsExactly(1, 3);
    }

    @Test
    void withoutASlotToAskForTheRankingIsNamedAsItIs() {
        List<EndpointState> ranked = List.of(at(1, IN_HOST), at(2, FREE_SLOT), at(3, ALL_BUSY));
        assertThat(ports(PickerProtocol.offered(ranked, 2))).containsExactly(1, 2, 3);
        assertThat(ports(PickerProtocol.offered(ranked, 5))).containsExactly(1, 2, 3);
        assertThat(PickerProtocol.offeredForSlot(List.of(), 2, "sql")).isEmpty();
    }
}
