package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.AdapterRegistry;
import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.engine.adapter.RegisteredAdapter.Phase;
import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimModel;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AdapterRegistryTest {
    @TempDir
    Path dir;

    private EngineFixture fixture(int maxLoras, int maxCpuLoras) {
        return new EngineFixture(
                EngineFixture.config()
                        .maxLoras(maxLoras)
                        .maxCpuLoras(maxCpuLoras)
                        .build(),
                LatencyModel.DEFAULT,
                TextMode.RANDOM,
                dir);
    }

    @Test
    void anAdapterGoesThroughEveryPhaseOfItsLifeInOrder() throws Exception {
        EngineFixture f = fixture(1, 2);
        f.register("a");
        RegisteredAdapter a = f.core.adapter("a");
        List<Phase> seen = new ArrayList<>(List.of(a.phase()));
        f.core.addListener(s -> {
            if (seen.get(seen.size() - 1) != a.phase()) seen.add(a.phase());
        });
        long running = f.submit("a", 4, 20);
        for (int i = 0; i < 100 && a.phase() != Phase.IN_SLOT; i++) f.driver.runUntil(f.clock.nanos() + 10_000_000);
        CompletableFuture<Void> done = f.core.unloadAdapter("a");
        assertThat(a.phase()).isEqualTo(Phase.UNLOADING);
        assertThat(a.running()).as("its request still runs").isEqualTo(1);
        f.driver.runToCompletion();

        assertThat(done).isDone();
        assertThat(f.last(running).finishReason()).isEqualTo(FinishReason.LENGTH);
        assertThat(seen)
                .containsExactly(Phase.REGISTERED, Phase.LOADING, Phase.IN_SLOT, Phase.UNLOADING, Phase.UNLOADED);
        assertThat(a.running() + a.waiting()).isZero();
        assertThat(f.core.adapterRegistry().hostOrder()).isEmpty();
    }

    @Test
    void anAdapterEvictedFromItsSlotIsBackInHostMemoryAndOneEvictedFromHostMemoryIsOnlyRegistered() throws Exception {
        EngineFixture f = fixture(1, 2);
        for (String n : List.of("a", "b", "c")) f.register(n);
        for (String n : List.of("a", "b")) {
            f.submit(n, 4, 2);
            f.driver.runToCompletion();
        }
        assertThat(f.core.adapter("a").phase()).isEqualTo(Phase.IN_HOST);
        assertThat(f.core.adapter("b").phase()).isEqualTo(Phase.IN_SLOT);
        f.submit("c", 4, 2);
        f.driver.runToCompletion();
        assertThat(f.core.adapter("a").phase()).isEqualTo(Phase.REGISTERED);
        assertThat(f.core.adapter("c").phase()).isEqualTo(Phase.IN_SLOT);
    }

    @Test
    void theResolverDirectoryRegistersAPlainNameFoundThereAndNothingElse() throws Exception {
        EngineFixture f = fixture(1, 2);
        AdapterRegistry registry = f.core.adapterRegistry();
        Path resolverDir = Files.createDirectories(dir.resolve("resolver"));
        EngineFixture.writeAdapter(resolverDir, "found", 3);
        assertThat(registry.resolve("found")).as("no resolver directory yet").isNull();

        List<String> checked = new ArrayList<>();
        registry.useResolverDirectory(resolverDir, requested -> {
            checked.add(requested);
            Path p = Path.of(requested);
            if (!Files.exists(p))
                throw new AdapterException(AdapterException.Kind.NOT_FOUND, "nothing at " + requested);
            return p;
        });
        assertThat(registry.resolve("missing")).isNull();
        assertThat(registry.resolve("../found")).as("not a plain name").isNull();
        assertThat(registry.resolve(".hidden")).isNull();
        assertThat(checked).containsExactly(resolverDir.resolve("missing").toString());

        CompletableFuture<?> load = registry.resolve("found");
        assertThat(load).isNotNull().isDone();
        assertThat(f.core.resolve("found")).isEqualTo(ModelTarget.ADAPTER);
        assertThat(registry.resolve("found"))
                .as("registered meanwhile by another request")
                .isDone();
        long id = f.submit("found", 4, 3);
        f.driver.runToCompletion();
        assertThat(f.last(id).outputTokens()).isEqualTo(3);
    }

    @Test
    void anAdapterInTheResolverDirectoryThatBreaksARuleIsRefused() throws Exception {
        EngineFixture f = fixture(1, 2);
        Path resolverDir = Files.createDirectories(dir.resolve("resolver"));
        PeftWriter.write(
                resolverDir.resolve("too-wide"),
                SimModel.DEFAULT_CONFIG,
                EngineFixture.MODEL,
                64,
                16,
                List.of("q_proj"),
                1);
        f.core.adapterRegistry().useResolverDirectory(resolverDir, Path::of);
        assertThatThrownBy(() -> f.core.adapterRegistry().resolve("too-wide"))
                .isInstanceOf(AdapterException.class)
                .hasMessageContaining("max_lora_rank")
                .extracting(e -> ((AdapterException) e).kind())
                .isEqualTo(AdapterException.Kind.INVALID);
        assertThat(f.core.resolve("too-wide")).isEqualTo(ModelTarget.UNKNOWN);
    }
}
