package dev.patchbay.router.config;

import dev.patchbay.router.pick.ProfileSettings;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RouterConfigTest {
    @Test
    void readsEverySection() throws Exception {
        RouterConfig config = RouterConfig.parse("""
                {
                  "profile": "gie-lora",
                  "weights": {"queue": 1, "lora-affinity": 5},
                  "residencyScores": {"inHost": 0.8},
                  "saturation": {"queueThreshold": 10},
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
        ProfileSettings settings = config.profileSettings();
        assertThat(settings.weights()).containsEntry("lora-affinity", 5.0);
        assertThat(settings.residencyScores().inHost()).isEqualTo(0.8);
        assertThat(settings.residencyScores().inSlot()).isEqualTo(1.0);
        assertThat(settings.saturation().queueThreshold()).isEqualTo(10);
        assertThat(settings.saturation().kvCacheThreshold()).isEqualTo(0.8);
    }

    @Test
    void emptyConfigMeansDefaults() throws Exception {
        RouterConfig config = RouterConfig.parse("{}");
        assertThat(config.profile()).isEqualTo("patchbay");
        assertThat(config.adapters()).isNull();
        assertThat(config.profileSettings()).isEqualTo(ProfileSettings.DEFAULT);
    }

    @Test
    void mistakesAreReportedClearly() {
        assertThatThrownBy(() -> RouterConfig.parse("{\"profil\": \"x\"}")).isInstanceOf(IOException.class)
                .hasMessageContaining("profil");
        assertThatThrownBy(() -> RouterConfig.parse("{\"profile\": \"fastest\"}")).hasMessageContaining("unknown profile");
        assertThatThrownBy(() -> RouterConfig.parse("{\"residencyScores\": {\"inHost\": 2}}"))
                .isInstanceOf(IOException.class);
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
}
