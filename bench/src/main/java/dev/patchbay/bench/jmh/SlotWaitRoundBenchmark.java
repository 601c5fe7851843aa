package dev.patchbay.bench.jmh;

import dev.patchbay.router.flow.SlotWaitQueue;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.PickResult;
import dev.patchbay.router.pick.Profiles;
import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
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
 * One slot-wait round in a saturated burst: {@code held} requests for a zipf-popular catalog of 1,000 adapters wait
 * while every slot of 100 endpoints is busy with other adapters, and the round finds no place for any of them (the
 * round the router runs after each scrape while the burst lasts). {@code repick} {@code per-request} picks again
 * for every held request; {@code per-adapter} lets one pick stand for every waiter of the same request, as the
 * router's waiters do.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class SlotWaitRoundBenchmark {
    private static final int ENDPOINTS = 100;
    private static final int ADAPTERS = 1000;
    private static final int SLOTS = 8;
    private static final double ZIPF_EXPONENT = 1.0;

    @Param({"1000", "10000"})
    public int held;

    @Param({"per-request", "per-adapter"})
    public String repick;

    private SlotWaitQueue queue;

    @Setup
    public void setUp() {
        Random random = new Random(2026);
        EndpointPicker picker = Profiles.create(Profiles.PATCHBAY, new Random(1));
        List<EndpointState> states = new ArrayList<>(ENDPOINTS);
        for (int e = 0; e < ENDPOINTS; e++) {
            states.add(new EndpointState(new Endpoint("10.0.0." + (e % 250), 8000 + e), allSlotsBusy(e)));
        }
        queue = new SlotWaitQueue(Long.MAX_VALUE / 4, () -> 0);
        double[] cumulative = zipfCumulative();
        boolean perAdapter = repick.equals("per-adapter");
        for (int i = 0; i < held; i++) {
            PickRequest request = PickRequest.adapter("adapter-" + sample(cumulative, random));
            SlotWaitQueue.Waiter waiter = new SlotWaitQueue.Waiter() {
                @Override
                public PickResult repick() {
                    return picker.pick(request, states);
                }

                @Override
                public void release(PickResult pick) {
                    throw new IllegalStateException("every slot is busy: nothing may be released");
                }

                @Override
                public Object repickKey() {
                    return perAdapter ? request : this;
                }
            };
            if (!queue.hold(request, picker.pick(request, states), waiter)) {
                throw new IllegalStateException("the request should wait for a slot");
            }
        }
    }

    /** Every slot busy with this endpoint's own adapters, which no held request asks for. */
    private static EndpointMetrics allSlotsBusy(int endpoint) {
        EndpointMetrics.Builder m = EndpointMetrics.builder()
                .modelName("base")
                .waitingRequests(0)
                .runningRequests(4 * SLOTS)
                .kvCacheUsage(0.5)
                .maxLora(SLOTS)
                .slots(SLOTS, SLOTS);
        for (int s = 0; s < SLOTS; s++) {
            String adapter = "busy-" + endpoint + "-" + s;
            m.resident(adapter, AdapterResidency.IN_SLOT).adapterRunning(adapter, 4);
        }
        return m.build();
    }

    private static double[] zipfCumulative() {
        double[] cumulative = new double[ADAPTERS];
        double sum = 0;
        for (int k = 0; k < ADAPTERS; k++) {
            sum += 1 / Math.pow(k + 1, ZIPF_EXPONENT);
            cumulative[k] = sum;
        }
        for (int k = 0; k < ADAPTERS; k++) {
            cumulative[k] /= sum;
        }
        return cumulative;
    }

    private static int sample(double[] cumulative, Random random) {
        int k = Arrays.binarySearch(cumulative, random.nextDouble());
        return Math.min(k >= 0 ? k : -k - 1, cumulative.length - 1);
    }

    @Benchmark
    public int round() {
        queue.releaseReady();
        return queue.size();
    }
}
