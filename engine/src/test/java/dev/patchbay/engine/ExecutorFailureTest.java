package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.clock.RealClock;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.StepResult;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import dev.patchbay.testkit.Await;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** A failing model step ends that batch's requests with an error; the engine goes on serving. */
class ExecutorFailureTest {
    @Test
    void failedStepFinishesItsRequestsWithErrorAndTheEngineKeepsServing() throws Exception {
        AtomicBoolean fail = new AtomicBoolean(true);
        SimModel sim = new SimModel("sim-test", SimModel.DEFAULT_CONFIG, LatencyModel.ZERO, TextMode.RANDOM, 0);
        DelegatingModel flaky = new DelegatingModel(sim) {
            @Override
            public StepResult execute(Batch batch) {
                if (fail.get()) throw new NoClassDefFoundError("jdk/incubator/vector/Vector");
                return super.execute(batch);
            }
        };
        try (Engine engine = Engine.start(EngineConfig.builder("sim-test").build(), flaky, RealClock.INSTANCE)) {
            CompletableFuture<RequestOutput> first = new CompletableFuture<>();
            engine.submit(new EngineRequest(new int[] {300, 301}, null, SamplingParams.fixedLength(3), 0, o -> {
                if (o.finished()) first.complete(o);
            }));
            RequestOutput failed = first.get(10, TimeUnit.SECONDS);
            assertThat(failed.finishReason()).isEqualTo(FinishReason.ERROR);
            assertThat(failed.error()).contains("NoClassDefFoundError");

            fail.set(false);
            CompletableFuture<RequestOutput> second = new CompletableFuture<>();
            engine.submit(new EngineRequest(new int[] {300, 301}, null, SamplingParams.fixedLength(3), 0, o -> {
                if (o.finished()) second.complete(o);
            }));
            assertThat(second.get(10, TimeUnit.SECONDS).finishReason()).isEqualTo(FinishReason.LENGTH);
            // Outputs are delivered before the step's snapshot is published: wait for it.
            Await.until(
                    "both finishes in the snapshot",
                    () -> engine.snapshot().counters().finished().total() == 2);
            assertThat(engine.snapshot().counters().finished().error()).isEqualTo(1);
            assertThat(engine.snapshot().kvBlocksUsed()).isZero();
        }
    }
}
