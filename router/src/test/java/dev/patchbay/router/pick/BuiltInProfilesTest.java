package dev.patchbay.router.pick;

import dev.patchbay.router.scrape.AdapterResidency;
import dev.patchbay.router.scrape.EndpointMetrics;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The built-in profile files build exactly the profiles that were hand-built before ({@link ReferenceProfiles}):
 * the same parts with the same parameters in the same order, and the same picks, with and without overrides.
 */
class BuiltInProfilesTest {
    private static final List<String> ADAPTERS = List.of("a", "b", "c", "d", "e", "f", "g", "h");
    private static final List<ProfileSettings> SETTINGS = List.of(
            ProfileSettings.DEFAULT,
            // Changes, removes and adds scorers, and replaces the residency scores and the saturation thresholds.
            new ProfileSettings(Map.of("kv-cache", 0.0, "lora-affinity", 1.5, "queue", 4.0),
                    new ResidencyScores(0.9, 0.8, 0.5, 0.2, 0.0), new SaturationDetector(3, 0.5)),
            new ProfileSettings(Map.of("lora-residency", 1.0, "prefill-queue", 0.5, "lora-bridge", 1.0,
                    "lora-load-state", 2.0), null, SaturationDetector.DEFAULT));

    @Test
    void eachFileBuildsTheHandBuiltParts() {
        AtomicLong clock = new AtomicLong();
        for (String name : Profiles.NAMES) {
            for (ProfileSettings settings : SETTINGS) {
                assertThat(PickerShape.of(Profiles.create(name, settings, new Random(1), clock::get)))
                        .as(name + " with " + settings)
                        .containsExactlyElementsOf(PickerShape.of(ReferenceProfiles.create(name, settings, new Random(1),
                                clock::get)));
            }
        }
    }

    /** The shape compared above does show every parameter (a shape that showed nothing would match anything). */
    @Test
    void shapesShowEveryParameter() {
        assertThat(PickerShape.of(Profiles.create(Profiles.PATCHBAY, new Random(1)))).containsExactly(
                "name patchbay",
                "filter lora-spread overloadWaiting=8 timeoutNanos=60000000000 cooldownNanos=30000000000",
                "filter lora-capacity",
                "scorer queue minSpread=4 weight 2.0",
                "scorer kv-cache weight 2.0",
                "scorer lora-residency ResidencyScores[inSlot=1.0, inHost=0.7, freeSlot=0.6, idleSlot=0.3, allSlotsBusy=0.0] weight 3.0",
                "scorer prefill-queue minSpreadTokens=1000 weight 0.75",
                "scorer lora-bridge weight 0.3",
                "picker MaxScorePicker",
                "saturation SaturationDetector[queueThreshold=5.0, kvCacheThreshold=0.8]",
                "countsOwnPicks true",
                "slotWaitNanos 1000000000");
        assertThat(PickerShape.of(Profiles.create(Profiles.PATCHBAY_NO_WAIT, new Random(1))))
                .contains("countsOwnPicks true", "slotWaitNanos 0");
        assertThat(PickerShape.of(Profiles.create(Profiles.LLMD_LOAD_STATE, new Random(1)))).containsExactly(
                "name llmd-load-state",
                "filter lora-residency maxReplicas=0 queueThreshold=8 kvCacheThreshold=0.8",
                "scorer queue minSpread=0 weight 2.0",
                "scorer kv-cache weight 2.0",
                "scorer lora-load-state Tiers[gpuResident=1.0, cpuResident=0.7, freeSlot=0.6, evictable=0.3, saturated=0.0, "
                        + "homeBonus=0.03, headroomBonus=0.03] weight 3.0",
                "picker MaxScorePicker",
                "saturation SaturationDetector[queueThreshold=5.0, kvCacheThreshold=0.8]",
                "countsOwnPicks false",
                "slotWaitNanos 0");
        assertThat(PickerShape.of(Profiles.create(Profiles.ROUND_ROBIN, new Random(1))))
                .contains("picker RoundRobinPicker").noneMatch(line -> line.startsWith("scorer") || line.startsWith("filter"));
    }

    /**
     * Same seed, same clock, same requests over random pools: every pick (outcome and whole ranking) and every total
     * score is identical, and lora-spread starts the same drains.
     */
    @Test
    void eachFilePicksAsTheHandBuiltProfile() {
        long drains = 0;
        for (String name : Profiles.NAMES) {
            for (int s = 0; s < SETTINGS.size(); s++) {
                ProfileSettings settings = SETTINGS.get(s);
                AtomicLong clock = new AtomicLong();
                EndpointPicker file = Profiles.create(name, settings, new Random(7), clock::get);
                EndpointPicker reference = ReferenceProfiles.create(name, settings, new Random(7), clock::get);
                Random random = new Random(100 + s);
                List<EndpointState> pool = pool(random);
                for (int i = 0; i < 1500; i++) {
                    clock.addAndGet(random.nextInt(3_000) * 1_000_000L);
                    PickRequest request = request(random);
                    // A pool lasts a few picks, as between scrapes, so that lora-spread's drains can persist and start.
                    if (i % 4 == 0) pool = pool(random);
                    String at = name + " with settings " + s + ", pick " + i;
                    assertThat(file.totalScores(request, pool)).as(at).containsExactly(reference.totalScores(request, pool));
                    PickResult mine = file.pick(request, pool);
                    PickResult theirs = reference.pick(request, pool);
                    assertThat(mine.outcome()).as(at).isEqualTo(theirs.outcome());
                    assertThat(mine.ranked()).as(at).isEqualTo(theirs.ranked());
                }
                assertThat(drainsStarted(file)).as(name).isEqualTo(drainsStarted(reference));
                drains += drainsStarted(file);
            }
        }
        assertThat(drains).as("the random pools make lora-spread drain, so its state is compared too").isPositive();
    }

    private static long drainsStarted(EndpointPicker picker) {
        long n = 0;
        for (Filter filter : picker.filters()) {
            if (filter instanceof LoraSpreadFilter spread) {
                n += spread.drainsStarted();
            }
        }
        return n;
    }

    private static PickRequest request(Random random) {
        PickRequest request = random.nextInt(5) == 0 ? PickRequest.baseModel("base")
                : PickRequest.adapter(ADAPTERS.get(random.nextInt(ADAPTERS.size())));
        return random.nextInt(10) == 0 ? request.asSheddable() : request;
    }

    /** One to eight of the same eight endpoints, so that state kept per endpoint (drains) carries over. */
    private static List<EndpointState> pool(Random random) {
        List<Integer> ports = new ArrayList<>(List.of(1, 2, 3, 4, 5, 6, 7, 8));
        Collections.shuffle(ports, random);
        List<EndpointState> pool = new ArrayList<>();
        for (int port : ports.subList(0, 1 + random.nextInt(ports.size()))) {
            pool.add(Fixtures.state(port, metrics(random)).withPromptTokensInFlight(random.nextInt(4) * 700L));
        }
        return pool;
    }

    /** Short and long queues, legacy gauges, and residency with slots mostly full, as lora-spread needs to act. */
    private static EndpointMetrics metrics(Random random) {
        EndpointMetrics.Builder b = EndpointMetrics.builder()
                .waitingRequests(random.nextInt(3) == 0 ? random.nextInt(60) : random.nextInt(6))
                .runningRequests(random.nextInt(300))
                .kvCacheUsage(random.nextInt(10) / 10.0)
                .maxLora(1 + random.nextInt(4))
                .activeAdapters(subset(random))
                .waitingAdapters(subset(random));
        if (random.nextInt(5) == 0) {
            return b.build(); // no residency families: only the legacy gauge
        }
        int slots = 1 + random.nextInt(4);
        int used = 0;
        List<String> adapters = new ArrayList<>(ADAPTERS);
        Collections.shuffle(adapters, random);
        for (String adapter : adapters) {
            int roll = random.nextInt(4);
            if (roll <= 1 && used < slots) {
                b.resident(adapter, new AdapterResidency(true, random.nextInt(10) == 0, 8));
                b.adapterRunning(adapter, random.nextInt(3) == 0 ? 0 : random.nextInt(200));
                used++;
            } else if (roll == 2) {
                b.resident(adapter, AdapterResidency.IN_HOST);
            }
            if (random.nextInt(4) == 0) {
                b.adapterWaiting(adapter, random.nextInt(20));
            }
        }
        return b.slots(slots, used).build();
    }

    private static Set<String> subset(Random random) {
        Set<String> names = new HashSet<>();
        for (String adapter : ADAPTERS) {
            if (random.nextInt(4) == 0) {
                names.add(adapter);
            }
        }
        return names;
    }
}
