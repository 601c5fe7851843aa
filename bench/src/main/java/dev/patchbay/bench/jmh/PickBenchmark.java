package dev.patchbay.bench.jmh;

import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.PickResult;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Router pick latency: filters, scorers and the picker over a pool of endpoints whose metrics
 * name some of a catalog of {@code adapters}, as the proxy runs it for each request (HTTP not
 * included).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class PickBenchmark {
    private static final int SLOTS = 8;
    private static final int HOST_CACHE = 24;

    @Param({"10", "100"})
    public int endpoints;

    @Param({"50", "1000"})
    public int adapters;

    @Param({Profiles.PATCHBAY, Profiles.GIE_LORA})
    public String profile;

    private EndpointPicker picker;
    private List<EndpointState> states;
    private PickRequest[] requests;
    private int next;

    @Setup
    public void setUp() {
        Random random = new Random(2026);
        picker = Profiles.create(profile, new Random(1));
        states = new ArrayList<>(endpoints);
        for (int e = 0; e < endpoints; e++) {
            states.add(new EndpointState(new Endpoint("10.0.0." + (e % 250), 8000 + e), metrics(random, adapters)));
        }
        requests = new PickRequest[1024];
        for (int i = 0; i < requests.length; i++) {
            requests[i] = PickRequest.adapter("adapter-" + random.nextInt(adapters));
        }
    }

    /** A server with some adapters in slots (some busy), more in host memory, and a legacy gauge. */
    private static EndpointMetrics metrics(Random random, int adapters) {
        EndpointMetrics.Builder m = EndpointMetrics.builder()
                .modelName("base")
                .waitingRequests(random.nextInt(20))
                .runningRequests(random.nextInt(64))
                .kvCacheUsage(random.nextDouble())
                .maxLora(SLOTS);
        Set<String> resident = new HashSet<>();
        Set<String> active = new HashSet<>();
        Set<String> waiting = new HashSet<>();
        int inSlots = 0;
        while (resident.size() < HOST_CACHE) {
            String adapter = "adapter-" + random.nextInt(adapters);
            if (!resident.add(adapter)) {
                continue;
            }
            boolean inSlot = inSlots < SLOTS - random.nextInt(2);
            m.resident(adapter, inSlot ? AdapterResidency.IN_SLOT : AdapterResidency.IN_HOST);
            if (inSlot) {
                inSlots++;
                if (random.nextBoolean()) {
                    m.adapterRunning(adapter, 1 + random.nextInt(8));
                    active.add(adapter);
                }
            } else if (random.nextInt(4) == 0) {
                m.adapterWaiting(adapter, 1 + random.nextInt(3));
                waiting.add(adapter);
            }
        }
        return m.slots(SLOTS, inSlots)
                .activeAdapters(active)
                .waitingAdapters(waiting)
                .build();
    }

    @Benchmark
    public PickResult pick() {
        PickRequest request = requests[next++ & (requests.length - 1)];
        return picker.pick(request, states);
    }
}
