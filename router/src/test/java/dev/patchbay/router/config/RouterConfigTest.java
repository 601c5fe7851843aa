package dev.patchbay.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.router.flow.FlowControl;
import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.place.PlacementSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RouterConfigTest {
    @Test
    void readsEverySection() throws Exception {
        RouterConfig config = RouterConfig.parse("""
                {
                  "profile": "gie-lora",
                  "flowControl": {"slotWait": "500ms", "saturation": {"queueDepthThreshold": 10}},
                  "baseModels": ["base-8b"],
                  "adapters": ["a", "b"],
                  "rewrites": [{"model": "ab", "targets": [{"model": "a", "weight": 3}, {"model": "b", "weight": 1}]}],
                  "objectives": {"batch": -1, "chat": 2},
                  "seed": 42
                }
                """);
        assertThat(config.profile()).isEqualTo("gie-lora");
        assertThat(config.seed()).isEqualTo(42L);
        assertThat(config.adapters()).containsExactly("a", "b");
        assertThat(config.rewrites()).hasSize(1);
        assertThat(config.objectives()).containsEntry("batch", -1);
        FlowControl flow = config.effectiveFlowControl();
        assertThat(flow.slotWait()).isEqualTo(Duration.ofMillis(500));
        assertThat(flow.saturation().queueDepthThreshold()).isEqualTo(10);
        assertThat(flow.saturation().kvCacheUtilThreshold()).as("the default").isEqualTo(0.8);
    }

    @Test
    void slotWaitIsOnWithThePatchbayProfileAndOffWithTheOthersUnlessSaid() throws Exception {
        assertThat(RouterConfig.parse("{}").effectiveFlowControl().slotWait()).isEqualTo(FlowControl.DEFAULT_SLOT_WAIT);
        assertThat(RouterConfig.parse("{\"profile\": \"gie-lora\"}")
                        .effectiveFlowControl()
                        .slotWait())
                .isZero();
        assertThat(RouterConfig.parse("{\"flowControl\": {\"slotWait\": \"0s\"}}")
                        .effectiveFlowControl()
                        .slotWait())
                .isZero();
        assertThatThrownBy(() -> RouterConfig.parse("{\"flowControl\": {\"slotWait\": \"-1s\"}}"))
                .isInstanceOf(IOException.class);
    }

    @Test
    void theServedModelsIntervalIsADurationWithAUnit() throws Exception {
        assertThat(RouterConfig.parse("{\"servedModelsInterval\": \"250ms\"}").servedModelsInterval())
                .isEqualTo(Duration.ofMillis(250));
        assertThat(RouterConfig.parse("{\"servedModelsInterval\": \"0s\"}").servedModelsInterval())
                .isZero();
        assertThat(RouterConfig.parse("{}").servedModelsInterval()).isNull();
        assertThatThrownBy(() -> RouterConfig.parse("{\"servedModelsInterval\": \"5\"}"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("'5' has no unit");
        assertThatThrownBy(() -> RouterConfig.parse("{\"servedModelsInterval\": 5}"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("duration with a unit");
    }

    @Test
    void emptyConfigMeansDefaults() throws Exception {
        RouterConfig config = RouterConfig.parse("{}");
        assertThat(config.profile()).isEqualTo("patchbay");
        assertThat(config.adapters()).isNull();
        assertThat(config.effectiveFlowControl()).isEqualTo(new FlowControl(FlowControl.DEFAULT_SLOT_WAIT, null));
    }

    @Test
    void placementIsOffUnlessSwitchedOnAndItsSettingsAreRead() throws Exception {
        assertThat(RouterConfig.parse("{}").effectivePlacement().on()).isFalse();
        RouterConfig config = RouterConfig.parse("{\"placement\": {\"enabled\": true, \"algorithm\": \"dynamo-mcf\", "
                + "\"interval\": \"2s\", \"maxLoadsPerTick\": 1, \"adapterPaths\": {\"sql\": \"/lora/sql\"}}}");
        RouterConfig.PlacementConfig p = config.effectivePlacement();
        assertThat(p.on()).isTrue();
        assertThat(p.algorithmName()).isEqualTo("dynamo-mcf");
        assertThat(p.settings().interval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(p.settings().maxLoadsPerTick()).isEqualTo(1);
        assertThat(p.settings().rateHalfLife()).isEqualTo(PlacementSettings.DEFAULT.rateHalfLife());
        assertThat(p.adapterPaths()).containsEntry("sql", "/lora/sql");
        // The command line's switch keeps the rest.
        RouterConfig.PlacementConfig off = config.withPlacementOn(false).effectivePlacement();
        assertThat(off.on()).isFalse();
        assertThat(off.algorithmName()).isEqualTo("dynamo-mcf");
        assertThat(RouterConfig.DEFAULT
                        .withPlacementOn(true)
                        .effectivePlacement()
                        .on())
                .isTrue();

        assertThatThrownBy(() -> RouterConfig.parse("{\"placement\": {\"algorithm\": \"random\"}}"))
                .hasMessageContaining("unknown placement algorithm 'random'");
        assertThatThrownBy(() -> RouterConfig.parse("{\"placement\": {\"releaseAfter\": 0}}"))
                .hasMessageContaining("releaseAfter");
    }

    @Test
    void mistakesAreReportedClearly() {
        assertThatThrownBy(() -> RouterConfig.parse("{\"profil\": \"x\"}"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("profil");
        assertThatThrownBy(() -> RouterConfig.parse("{\"profile\": \"fastest\"}"))
                .hasMessageContaining("unknown profile");
        // A profile is changed in its profile file, not here.
        assertThatThrownBy(() -> RouterConfig.parse("{\"weights\": {\"queue\": 2}}"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("weights");
    }

    @Test
    void readsAFile() throws Exception {
        Path file = Files.createTempFile("router", ".json");
        try {
            Files.writeString(file, "{\"profile\": \"round-robin\"}");
            assertThat(RouterConfig.read(file).profile()).isEqualTo("round-robin");
        } finally {
            Files.deleteIfExists(file);
        }
        assertThatThrownBy(() -> RouterConfig.read(file)).hasMessageContaining(file.toString());
    }

    /** A profile file with the given profiles, each a queue scorer at weight 2 and a kv-cache scorer at 1. */
    private static String profiles(String... names) {
        StringBuilder profiles = new StringBuilder();
        for (String name : names) {
            profiles.append(profiles.isEmpty() ? "" : ", ")
                    .append("{\"name\": \"")
                    .append(name)
                    .append(
                            "\", \"plugins\": ["
                                    + "{\"pluginRef\": \"queue-scorer\", \"weight\": 2}, {\"pluginRef\": \"kv-cache-scorer\"}]}");
        }
        return """
                {"apiVersion": "inference.networking.x-k8s.io/v1alpha1", "kind": "EndpointPickerConfig",
                 "plugins": [{"type": "queue-scorer"}, {"type": "kv-cache-scorer"}],
                 "schedulingProfiles": [%s]}
                """.formatted(profiles);
    }

    @Test
    void aProfileFileNextToTheConfigGivesItsOnlyProfileAsItIsWritten(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("profiles"));
        Files.writeString(dir.resolve("profiles/mine.json"), profiles("mine"));
        Path file = dir.resolve("router.json");
        Files.writeString(file, "{\"profileFile\": \"profiles/mine.json\"}");
        RouterConfig config = RouterConfig.read(file);
        assertThat(config.profile()).isEqualTo("mine");
        assertThat(config.profileFile().source())
                .isEqualTo(dir.resolve("profiles/mine.json").toString());
        EndpointPicker picker = config.createPicker(new Random(1));
        assertThat(picker.name()).isEqualTo("mine");
        assertThat(picker.scorers())
                .extracting(w -> w.scorer().name() + "=" + w.weight())
                .containsExactly("queue=2.0", "kv-cache=1.0");
        assertThat(config.createPicker(new Random(1)))
                .as("a new picker each time")
                .isNotSameAs(picker);
    }

    @Test
    void aFileOfSeveralProfilesNeedsProfileWhichMayAlsoNameABuiltInOne(@TempDir Path dir) throws Exception {
        Path profiles = dir.resolve("profiles.json");
        Files.writeString(profiles, profiles("a", "b"));
        String file = profiles.toString().replace("\\", "\\\\");
        assertThatThrownBy(() -> RouterConfig.parse("{\"profileFile\": \"" + file + "\"}"))
                .hasMessageContaining(
                        "profile file " + profiles + " defines several profiles (a, b): name one in \"profile\"");
        assertThat(RouterConfig.parse("{\"profileFile\": \"" + file + "\", \"profile\": \"b\"}")
                        .createPicker(new Random(1))
                        .name())
                .isEqualTo("b");
        assertThat(RouterConfig.parse("{\"profileFile\": \"" + file + "\", \"profile\": \"gie-lora\"}")
                        .createPicker(new Random(1))
                        .scorers())
                .hasSize(3);
        assertThatThrownBy(() -> RouterConfig.parse("{\"profileFile\": \"" + file + "\", \"profile\": \"c\"}"))
                .hasMessageContaining("unknown profile 'c'; known: round-robin, least-queue, gie-default, gie-lora, "
                        + "llmd-load-state, patchbay, dynamo-placement, a, b (built-in and from " + profiles + ")");
    }

    @Test
    void aProfileFileMayNotReuseABuiltInName(@TempDir Path dir) throws Exception {
        Path profiles = dir.resolve("profiles.json");
        Files.writeString(profiles, profiles("patchbay"));
        Path file = dir.resolve("router.json");
        Files.writeString(file, "{\"profileFile\": \"profiles.json\"}");
        assertThatThrownBy(() -> RouterConfig.read(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(
                        "profile file " + profiles + ": profile 'patchbay' has the name of a built-in profile");
    }

    @Test
    void aBadProfileFileStopsTheConfigNamingBothFilesTheProfileAndTheEntry(@TempDir Path dir) throws Exception {
        Path profiles = dir.resolve("profiles.json");
        Files.writeString(
                profiles, profiles("mine").replace("\"pluginRef\": \"kv-cache-scorer\"", "\"pluginRef\": \"kv-cach\""));
        Path file = dir.resolve("router.json");
        Files.writeString(file, "{\"profileFile\": \"profiles.json\"}");
        assertThatThrownBy(() -> RouterConfig.read(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("cannot read router config " + file)
                .hasMessageContaining(
                        "profile file " + profiles + ": profile 'mine', pluginRef 'kv-cach': names no plugin");
        Files.delete(profiles);
        assertThatThrownBy(() -> RouterConfig.read(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("cannot read profile file " + profiles);
    }
}
