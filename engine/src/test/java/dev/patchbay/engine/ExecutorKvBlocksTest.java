package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.engine.clock.VirtualClock;
import dev.patchbay.engine.sched.EngineCore;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import java.util.OptionalInt;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.Test;

/** An executor that holds a KV cache of its own is the one source of the engine's block count. */
class ExecutorKvBlocksTest {
    private static DelegatingModel holding(int blocks) {
        return new DelegatingModel(SimModel.withDefaults("sim-test", LatencyModel.ZERO)) {
            @Override
            public OptionalInt kvCacheBlocks() {
                return OptionalInt.of(blocks);
            }
        };
    }

    private static EngineCore core(int configured, DelegatingModel model) {
        return new EngineCore(
                EngineConfig.builder("sim-test").numKvBlocks(configured).build(),
                model,
                new VirtualClock(),
                ForkJoinPool.commonPool(),
                () -> {});
    }

    @Test
    void anEnginePlanningOtherBlocksThanTheExecutorHoldsIsRefused() {
        assertThatThrownBy(() -> core(8192, holding(1456)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the engine is configured with 8192 KV blocks but the executor holds 1456");
        assertThatThrownBy(() -> core(100, holding(1456))).isInstanceOf(IllegalArgumentException.class);
        assertThatCode(() -> core(1456, holding(1456))).doesNotThrowAnyException();
    }

    @Test
    void anExecutorWithoutACacheTakesAnyCount() {
        assertThatCode(() -> core(8192, new DelegatingModel(SimModel.withDefaults("sim-test", LatencyModel.ZERO))))
                .doesNotThrowAnyException();
    }
}
