package dev.patchbay.router.place;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.Rendezvous;
import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How routing reads a placement: the placement scorer and Dynamo's filter. */
class PlacementRoutingTest {
    static final Endpoint A = Fleets.server(0), B = Fleets.server(1), C = Fleets.server(2);
    static final Placement HOT_ON_A_AND_B =
            new Placement(1, List.of(A, B, C), Map.of("hot", List.of(A, B)), Map.of("hot", java.util.Set.of(C)));

    static EndpointState state(Endpoint e, int waiting, boolean holdsHot) {
        EndpointMetrics.Builder m =
                EndpointMetrics.builder().waitingRequests(waiting).slots(2, 0);
        if (holdsHot) m.resident("hot", AdapterResidency.IN_SLOT);
        return new EndpointState(e, m.build());
    }

    @Test
    void theScorerPrefersPlannedHomesAndLeavesUnplannedAdaptersAlone() {
        PlacementScorer scorer = new PlacementScorer(() -> HOT_ON_A_AND_B);
        List<EndpointState> all = List.of(state(A, 0, false), state(B, 0, false), state(C, 0, true));

        assertThat(scorer.score(PickRequest.adapter("hot"), all)).containsExactly(1, 1, 0);
        assertThat(scorer.score(PickRequest.adapter("cold"), all)).containsExactly(0, 0, 0);
        assertThat(scorer.score(PickRequest.baseModel("base"), all)).containsExactly(0, 0, 0);
        assertThat(new PlacementScorer(() -> Placement.NONE).score(PickRequest.adapter("hot"), all))
                .containsExactly(0, 0, 0);
    }

    @Test
    void theFilterKeepsAvailableHomesWithTheAdapterLoadedThenHomesThenEveryone() {
        PlacementFilter filter = new PlacementFilter(() -> HOT_ON_A_AND_B);
        EndpointState aLoaded = state(A, 0, true), bEmpty = state(B, 0, false), c = state(C, 0, true);
        assertThat(filter.filter(PickRequest.adapter("hot"), List.of(aLoaded, bEmpty, c)))
                .containsExactly(aLoaded);
        EndpointState aEmpty = state(A, 0, false);
        assertThat(filter.filter(PickRequest.adapter("hot"), List.of(aEmpty, bEmpty, c)))
                .containsExactly(aEmpty, bEmpty);
        // A busy home is not available: with both busy, everyone.
        EndpointState aBusy = state(A, PlacementFilter.BUSY_WAITING + 1, true);
        EndpointState bBusy = state(B, PlacementFilter.BUSY_WAITING + 1, false);
        assertThat(filter.filter(PickRequest.adapter("hot"), List.of(aBusy, bEmpty, c)))
                .containsExactly(bEmpty);
        assertThat(filter.filter(PickRequest.adapter("hot"), List.of(aBusy, bBusy, c)))
                .containsExactly(aBusy, bBusy, c);
        // An adapter without a plan has its rendezvous home.
        List<EndpointState> all = List.of(state(A, 0, false), state(B, 0, false), state(C, 0, false));
        Endpoint pin = Rendezvous.first("cold", List.of(A, B, C));
        assertThat(filter.filter(PickRequest.adapter("cold"), all))
                .extracting(EndpointState::endpoint)
                .containsExactly(pin);
    }

    @Test
    void releasedCopiesAreKnownToThePlacement() {
        assertThat(HOT_ON_A_AND_B.isReleased("hot", C)).isTrue();
        assertThat(HOT_ON_A_AND_B.isReleased("hot", A)).isFalse();
        assertThat(HOT_ON_A_AND_B.homesOf("cold")).containsExactly(Rendezvous.first("cold", List.of(A, B, C)));
    }
}
