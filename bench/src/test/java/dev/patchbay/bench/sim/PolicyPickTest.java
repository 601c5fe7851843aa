package dev.patchbay.bench.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.stats.AdapterState.Level;
import dev.patchbay.engine.stats.EngineSnapshot;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Each policy, fed replicas through the snapshot-to-metrics bridge, picks as its scorers say. */
class PolicyPickTest {

    private static List<EndpointState> fleet(String policy, EngineSnapshot... replicas) {
        List<EndpointState> states = new ArrayList<>();
        for (int i = 0; i < replicas.length; i++) {
            EndpointMetrics m = SnapshotScrape.read(
                    replicas[i], SnapshotScrape.View.RESIDENCY); // the whole page, as the simulator reads it
            states.add(new EndpointState(new Endpoint("replica-" + i, 8000), m));
        }
        return states;
    }

    private static String pick(String policy, String adapter, EngineSnapshot... replicas) {
        var picker = Profiles.create(policy, new Random(7));
        return picker.pick(PickRequest.adapter(adapter), fleet(policy, replicas))
                .best()
                .endpoint()
                .host();
    }

    /** Replica 0 holds "x" in a slot, idle; replica 1 holds nothing and has slightly less KV in use. */
    private static EngineSnapshot[] idleResidentAgainstEmpty() {
        EngineSnapshot warm = Snapshots.replica(3)
                .queue(0, 4)
                .kv(0.30)
                .adapter("x", Level.GPU, 0, 0)
                .adapter("y", Level.GPU, 4, 0)
                .build();
        EngineSnapshot cold = Snapshots.replica(3)
                .queue(0, 4)
                .kv(0.25)
                .adapter("z", Level.GPU, 4, 0)
                .build();
        return new EngineSnapshot[] {warm, cold};
    }

    @Test
    void legacyViewHidesAnIdleResidentAdapterAndResidencyViewShowsIt() {
        EngineSnapshot warm = idleResidentAgainstEmpty()[0];
        EndpointMetrics legacy = SnapshotScrape.read(warm, SnapshotScrape.View.LEGACY);
        EndpointMetrics residency = SnapshotScrape.read(warm, SnapshotScrape.View.RESIDENCY);

        assertThat(legacy.hasResidencyFamilies()).isFalse();
        assertThat(legacy.activeAdapters()).containsExactly("y");
        assertThat(legacy.knownAdapters()).doesNotContain("x");
        assertThat(legacy.maxLora()).isEqualTo(3);

        assertThat(residency.hasResidencyFamilies()).isTrue();
        assertThat(residency.residency().get("x").inSlot()).isTrue();
        assertThat(residency.gpuSlots()).isEqualTo(3);
        assertThat(residency.gpuSlotsUsed()).isEqualTo(2);
        assertThat(residency.adapterRunning("y")).isEqualTo(4);
        assertThat(residency.adapterRunning("x")).isZero();
        assertThat(residency.waitingRequests()).isZero();
        assertThat(residency.runningRequests()).isEqualTo(4);
        assertThat(residency.kvCacheUsage()).isEqualTo(0.30);
    }

    @Test
    void patchbaySendsToTheIdleResidentWhereGieLoraCannotSeeIt() {
        // gie-lora: both 0.8 (capacity) on the legacy gauge, so the lower KV use decides.
        assertThat(pick(Profiles.GIE_LORA, "x", idleResidentAgainstEmpty())).isEqualTo("replica-1");
        assertThat(pick(Profiles.GIE_DEFAULT, "x", idleResidentAgainstEmpty())).isEqualTo("replica-1");
        // patchbay: in a slot (1.0) beats a free slot (0.6) by more than the KV difference.
        assertThat(pick(Profiles.PATCHBAY, "x", idleResidentAgainstEmpty())).isEqualTo("replica-0");
    }

    @Test
    void gieLoraPrefersTheReplicaWhereTheAdapterIsRunning() {
        EngineSnapshot active = Snapshots.replica(3)
                .queue(1, 6)
                .kv(0.4)
                .adapter("x", Level.GPU, 6, 1)
                .build();
        EngineSnapshot other = Snapshots.replica(3)
                .queue(1, 6)
                .kv(0.3)
                .adapter("a", Level.GPU, 2, 0)
                .adapter("b", Level.GPU, 2, 0)
                .adapter("c", Level.GPU, 2, 1)
                .build();
        assertThat(pick(Profiles.GIE_LORA, "x", active, other)).isEqualTo("replica-0");
        assertThat(pick(Profiles.GIE_DEFAULT, "x", active, other)).isEqualTo("replica-1");
    }

    @Test
    void patchbaySkipsAReplicaWhoseSlotsAreAllBusyWithOtherAdaptersDespiteItsShorterQueue() {
        EngineSnapshot busy = Snapshots.replica(2)
                .queue(0, 8)
                .kv(0.1)
                .adapter("a", Level.GPU, 4, 0)
                .adapter("b", Level.GPU, 4, 0)
                .build();
        EngineSnapshot longer = Snapshots.replica(2)
                .queue(5, 8)
                .kv(0.6)
                .adapter("c", Level.GPU, 8, 5)
                .build();
        assertThat(pick(Profiles.PATCHBAY, "x", busy, longer)).isEqualTo("replica-1");
        assertThat(pick(Profiles.LEAST_QUEUE, "x", busy, longer)).isEqualTo("replica-0");
    }

    @Test
    void patchbayPrefersHostMemoryToStorage() {
        EngineSnapshot inHost = Snapshots.replica(2)
                .queue(0, 2)
                .kv(0.2)
                .adapter("x", Level.CPU, 0, 0)
                .adapter("a", Level.GPU, 2, 0)
                .build();
        EngineSnapshot empty = Snapshots.replica(2)
                .queue(0, 2)
                .kv(0.1)
                .adapter("b", Level.GPU, 2, 0)
                .build();
        assertThat(pick(Profiles.PATCHBAY, "x", inHost, empty)).isEqualTo("replica-0");
    }

    @Test
    void leastQueuePicksTheShortestWaitingQueue() {
        EngineSnapshot a = Snapshots.replica(3).queue(4, 1).build();
        EngineSnapshot b = Snapshots.replica(3).queue(1, 9).build();
        EngineSnapshot c = Snapshots.replica(3).queue(3, 0).build();
        assertThat(pick(Profiles.LEAST_QUEUE, "x", a, b, c)).isEqualTo("replica-1");
    }

    @Test
    void roundRobinTakesEveryReplicaInTurnWhateverTheirState() {
        EngineSnapshot idle = Snapshots.replica(3).build();
        EngineSnapshot loaded = Snapshots.replica(3).queue(50, 200).kv(0.95).build();
        var picker = Profiles.create(Profiles.ROUND_ROBIN, new Random(1));
        List<EndpointState> states = fleet(Profiles.ROUND_ROBIN, idle, loaded, idle);
        List<String> order = new ArrayList<>();
        for (int i = 0; i < 6; i++)
            order.add(picker.pick(PickRequest.adapter("x"), states)
                    .best()
                    .endpoint()
                    .host());
        assertThat(order).containsExactly("replica-0", "replica-1", "replica-2", "replica-0", "replica-1", "replica-2");
    }
}
