package dev.patchbay.router.pick;

import static dev.patchbay.router.pick.Fixtures.state;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** llm-d's lora-load-state scorer and lora-residency filter, against the numbers of llm-d-router PR #2792. */
class LlmdLoadStateTest {
    private static final PickRequest SQL = PickRequest.adapter("sql");
    private static final LoraLoadStateScorer.Tiers NO_BONUS =
            new LoraLoadStateScorer.Tiers(1.0, 0.7, 0.6, 0.3, 0, 0, 0);

    /** Four slots; {@code inSlot} adapters in slots with requests in flight unless listed {@code idle}. */
    private static EndpointMetrics server(int slotsUsed, List<String> inSlot, Set<String> idle, String inHost) {
        EndpointMetrics.Builder b = EndpointMetrics.builder().maxLora(4).slots(4, slotsUsed);
        Set<String> active = new HashSet<>();
        for (String a : inSlot) {
            b.resident(a, AdapterResidency.IN_SLOT);
            if (!idle.contains(a)) {
                active.add(a);
                b.adapterRunning(a, 1);
            }
        }
        if (inHost != null) b.resident(inHost, AdapterResidency.IN_HOST);
        return b.activeAdapters(active).waitingAdapters(active).build();
    }

    @Test
    void tiersFollowWhatServingTheAdapterThereTakes() {
        List<EndpointState> states = List.of(
                state(1, server(4, List.of("sql", "a", "b", "c"), Set.of(), null)),
                state(2, server(4, List.of("a", "b", "c", "d"), Set.of(), "sql")),
                state(3, server(3, List.of("a", "b", "c"), Set.of(), null)),
                state(4, server(4, List.of("a", "b", "c", "d"), Set.of("d"), null)),
                state(5, server(4, List.of("a", "b", "c", "d"), Set.of(), null)));
        assertThat(new LoraLoadStateScorer(NO_BONUS).score(SQL, states)).containsExactly(1.0, 0.7, 0.6, 0.3, 0.0);
    }

    @Test
    void bonusesReorderOnlyWithinATier() {
        // PR #2792's worked numbers: scale 0.94; in a slot on a full server 0.94, with 1 of 4 slots used 0.94 + 0.03 *
        // 0.75.
        List<EndpointState> states = List.of(
                state(1, server(4, List.of("sql", "a", "b", "c"), Set.of(), null)),
                state(2, server(1, List.of("sql"), Set.of(), null)),
                state(3, server(4, List.of("a", "b", "c", "d"), Set.of(), "sql")),
                state(4, server(0, List.of(), Set.of(), null)));
        double[] s = new LoraLoadStateScorer().score(SQL, states);
        int home = LoraLoadStateScorer.home("sql", states);
        double homeBonus = 0.03;
        assertThat(s[0]).as("in a slot: no home bonus, no headroom").isCloseTo(0.94, within(1e-12));
        assertThat(s[1]).isCloseTo(0.94 + 0.03 * 0.75, within(1e-12));
        assertThat(s[2]).isCloseTo(0.658 + (home == 2 ? homeBonus : 0), within(1e-12));
        assertThat(s[3]).isCloseTo(0.564 + 0.03 + (home == 3 ? homeBonus : 0), within(1e-12));
        assertThat(s[2])
                .as("host memory on a full server beats a free slot with every bonus")
                .isGreaterThan(0.564 + 0.06);
    }

    @Test
    void theHomeIsTheHighestFnv1aHashWhateverTheOrder() {
        // FNV-1a 64 of the bytes adapter, 0, address; reference values from an independent implementation.
        assertThat(Long.toHexString(Rendezvous.fnv1a64("", ""))).isEqualTo("af63bd4c8601b7df");
        assertThat(Long.toHexString(Rendezvous.fnv1a64("sql", "10.0.0.1:8000"))).isEqualTo("197f8d121c50d4d5");
        List<EndpointState> states = new ArrayList<>();
        for (int port = 1; port <= 8; port++) states.add(state(port, EndpointMetrics.EMPTY));
        Endpoint home = states.get(LoraLoadStateScorer.home("sql", states)).endpoint();
        Collections.reverse(states);
        assertThat(states.get(LoraLoadStateScorer.home("sql", states)).endpoint())
                .isEqualTo(home);
        // On a saturated fleet only the home stands out.
        List<EndpointState> full = new ArrayList<>();
        for (int port = 1; port <= 8; port++)
            full.add(state(port, server(4, List.of("a", "b", "c", "d"), Set.of(), null)));
        double[] s = new LoraLoadStateScorer().score(SQL, full);
        int h = LoraLoadStateScorer.home("sql", full);
        for (int i = 0; i < s.length; i++) assertThat(s[i]).isEqualTo(i == h ? 0.03 : 0.0);
    }

    @Test
    void baseModelRequestsScoreTheShareOfSlotsNotServingAnAdapter() {
        List<EndpointState> states = List.of(
                state(1, server(4, List.of("a", "b", "c", "d"), Set.of("c", "d"), null)),
                state(2, server(0, List.of(), Set.of(), null)),
                state(3, EndpointMetrics.EMPTY));
        assertThat(new LoraLoadStateScorer().score(PickRequest.baseModel("base"), states))
                .containsExactly(0.5 * 0.94, 1.0 * 0.94, 1.0 * 0.94);
    }

    @Test
    void anAdapterWithOnlyWaitingRequestsIsNotIdle() {
        // Both slots taken; "b" has a request waiting for its turn, none running: its slot is not free to evict.
        EndpointMetrics waitingOnly = EndpointMetrics.builder()
                .maxLora(2)
                .slots(2, 2)
                .resident("a", AdapterResidency.IN_SLOT)
                .resident("b", AdapterResidency.IN_SLOT)
                .adapterRunning("a", 1)
                .adapterWaiting("b", 1)
                .activeAdapters(Set.of("a"))
                .waitingAdapters(Set.of("b"))
                .build();
        List<EndpointState> states = List.of(state(1, waitingOnly));
        assertThat(new LoraLoadStateScorer(NO_BONUS).score(SQL, states)).containsExactly(0.0);
        assertThat(new LoraLoadStateScorer(NO_BONUS).score(PickRequest.baseModel("base"), states))
                .containsExactly(0.0);
    }

    @Test
    void tiersThatABonusCouldCrossAreRefused() {
        assertThatThrownBy(() -> new LoraLoadStateScorer.Tiers(1.0, 0.64, 0.6, 0.3, 0, 0.03, 0.03))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lift a tier");
        assertThatThrownBy(() -> new LoraLoadStateScorer.Tiers(1.0, 0.7, 0.8, 0.3, 0, 0.03, 0.03))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not increase");
        assertThat(new LoraLoadStateScorer.Tiers(1.0, 0.7, 0.6, 0.3, 0.3, 0.03, 0.03).evictable())
                .isEqualTo(0.3);
    }

    @Test
    void residencyFilterKeepsHomesUntilAllAreSaturatedThenOpensAWarmCopyFirst() {
        LoraResidencyFilter filter = new LoraResidencyFilter();
        EndpointMetrics home = EndpointMetrics.builder()
                .slots(4, 1)
                .resident("sql", AdapterResidency.IN_SLOT)
                .build();
        EndpointMetrics busyHome = EndpointMetrics.builder()
                .slots(4, 1)
                .resident("sql", AdapterResidency.IN_SLOT)
                .waitingRequests(9)
                .build();
        EndpointMetrics warm = EndpointMetrics.builder()
                .slots(4, 0)
                .resident("sql", AdapterResidency.IN_HOST)
                .build();
        EndpointMetrics cold = EndpointMetrics.builder().slots(4, 0).build();
        EndpointMetrics fullKv =
                EndpointMetrics.builder().slots(4, 0).kvCacheUsage(0.9).build();

        // sticky: one home with room keeps every home, the saturated one too
        assertThat(Fixtures.ports(filter.filter(SQL, List.of(state(1, busyHome), state(2, home), state(3, cold)))))
                .containsExactly(1, 2);
        // spread: all homes saturated, a host-memory copy first, then a cold endpoint that is not saturated
        assertThat(Fixtures.ports(filter.filter(SQL, List.of(state(1, busyHome), state(2, warm), state(3, cold)))))
                .containsExactly(2);
        assertThat(Fixtures.ports(filter.filter(SQL, List.of(state(1, busyHome), state(3, cold), state(4, fullKv)))))
                .containsExactly(3);
        // fleet saturated: the homes
        assertThat(Fixtures.ports(filter.filter(SQL, List.of(state(1, busyHome), state(4, fullKv)))))
                .containsExactly(1);
        // capped: no new copy beyond maxReplicas homes
        assertThat(Fixtures.ports(new LoraResidencyFilter(new LoraResidencyFilter.Settings(1, 8, 0.8))
                        .filter(SQL, List.of(state(1, busyHome), state(3, cold)))))
                .containsExactly(1);
        // no home anywhere, or a base-model request: everything passes
        List<EndpointState> noHome = List.of(state(2, warm), state(3, cold));
        assertThat(filter.filter(SQL, noHome)).isEqualTo(noHome);
        List<EndpointState> mixed = List.of(state(1, home), state(3, cold));
        assertThat(filter.filter(PickRequest.baseModel("base"), mixed)).isEqualTo(mixed);
    }

    @Test
    void theProfileRunsTheFilterBeforeTheScorer() {
        EndpointPicker picker = Profiles.create(Profiles.LLMD_LOAD_STATE, new Random(1));
        EndpointMetrics home = EndpointMetrics.builder()
                .maxLora(4)
                .slots(4, 1)
                .resident("sql", AdapterResidency.IN_SLOT)
                .waitingRequests(5)
                .build();
        EndpointMetrics idle = EndpointMetrics.builder().maxLora(4).slots(4, 0).build();
        // The idle server has the shorter queue, but the home is not saturated: the filter keeps the request there.
        PickResult pick = picker.pick(SQL, List.of(state(1, idle), state(2, home)));
        assertThat(pick.best().endpoint().port()).isEqualTo(2);
    }
}
