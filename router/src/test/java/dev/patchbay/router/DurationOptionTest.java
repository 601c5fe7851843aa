package dev.patchbay.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class DurationOptionTest {
    @Test
    void readsEveryUnit() {
        assertThat(DurationOption.parse("50ms")).isEqualTo(Duration.ofMillis(50));
        assertThat(DurationOption.parse("2s")).isEqualTo(Duration.ofSeconds(2));
        assertThat(DurationOption.parse(" 1.5S ")).isEqualTo(Duration.ofMillis(1500));
        assertThat(DurationOption.parse("1m")).isEqualTo(Duration.ofMinutes(1));
        assertThat(DurationOption.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(DurationOption.parse("0s")).isZero();
    }

    @Test
    void aBareNumberIsRefusedWithAMessageThatAsksForAUnit() {
        assertThatThrownBy(() -> DurationOption.parse("50"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no unit")
                .hasMessageContaining("50ms");
        assertThatThrownBy(() -> new DurationOption().convert("2.5"))
                .isInstanceOf(CommandLine.TypeConversionException.class)
                .hasMessageContaining("no unit");
    }

    @Test
    void nonsenseAndNegativesAreRefused() {
        for (String bad : new String[] {"soon", "-1s", "ms", "1e3s", "NaNs", "1..2s", "ten minutes"}) {
            assertThatThrownBy(() -> DurationOption.parse(bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("e.g. 50ms");
        }
    }

    @Test
    void formatReadsBack() {
        for (String text : new String[] {"10m", "30s", "500ms", "2h", "0s"}) {
            assertThat(DurationOption.format(DurationOption.parse(text))).isEqualTo(text);
        }
    }
}
