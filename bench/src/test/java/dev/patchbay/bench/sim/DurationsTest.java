package dev.patchbay.bench.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DurationsTest {
    @Test
    void parsesEveryUnit() {
        assertThat(Durations.parseNanos("50ms")).isEqualTo(50_000_000L);
        assertThat(Durations.parseNanos("30s")).isEqualTo(30_000_000_000L);
        assertThat(Durations.parseNanos("10m")).isEqualTo(600_000_000_000L);
        assertThat(Durations.parseNanos("1h")).isEqualTo(3_600_000_000_000L);
        assertThat(Durations.parseNanos("2.5")).isEqualTo(2_500_000_000L);
    }

    @Test
    void refusesWhatIsNotADuration() {
        assertThatThrownBy(() -> Durations.parseNanos("ten minutes")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Durations.parseNanos("-1s")).isInstanceOf(IllegalArgumentException.class);
    }
}
