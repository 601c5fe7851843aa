package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.engine.sim.SimModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Servers started together on one machine write the same demo adapters while others already load them. */
class DemoAdaptersTest {
    private static final int ADAPTERS = 3;

    @TempDir
    Path root;

    @Test
    void aServerLoadingAnAdapterNeverReadsOneThatAnotherIsRewriting() throws Exception {
        List<ServerOptions.LoraModule> modules =
                DemoAdapters.write(root, ADAPTERS, SimModel.DEFAULT_CONFIG, "patchbay-sim");
        ConcurrentLinkedQueue<String> broken = new ConcurrentLinkedQueue<>();
        AtomicBoolean writing = new AtomicBoolean(true);
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < 3; w++) {
                writers.add(threads.submit(() -> {
                    start.await();
                    for (int round = 0; round < 30; round++) {
                        DemoAdapters.write(root, ADAPTERS, SimModel.DEFAULT_CONFIG, "patchbay-sim");
                    }
                    return null;
                }));
            }
            List<Future<Integer>> readers = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                readers.add(threads.submit(() -> {
                    start.await();
                    int reads = 0;
                    while (writing.get() || reads == 0) {
                        for (ServerOptions.LoraModule m : modules) {
                            try {
                                PeftReader.read(m.name(), m.path(), SimModel.DEFAULT_CONFIG, 16);
                            } catch (AdapterException e) {
                                broken.add(m.name() + ": " + e.getMessage());
                            }
                            reads++;
                        }
                    }
                    return reads;
                }));
            }
            start.countDown();
            for (Future<?> f : writers) {
                f.get();
            }
            writing.set(false);
            for (Future<Integer> f : readers) {
                assertThat(f.get()).isPositive();
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(broken).as("reads of a half-written adapter").isEmpty();
        try (Stream<Path> left = Files.list(root)) {
            assertThat(left.map(p -> p.getFileName().toString()))
                    .as("no staging directory left behind")
                    .containsExactlyInAnyOrder("sql-lora", "chat-lora", "code-lora");
        }
    }
}
