package dev.patchbay.engine.exec;

import dev.patchbay.engine.adapter.AdapterSpec;
import java.io.IOException;
import java.util.OptionalInt;

/**
 * Runs the model. The engine calls {@link #execute}, {@link #activate} and {@link #deactivate} from its loop
 * thread only; {@link #loadAdapter} runs on a loader thread, concurrently with steps.
 */
public interface Executor extends AutoCloseable {
    /** Reads an adapter from storage into host memory. */
    LoadedAdapter loadAdapter(AdapterSpec spec) throws IOException;

    /** Modeled time of {@link #loadAdapter}; 0 when the load takes real time. */
    long modeledLoadNanos(AdapterSpec spec);

    /** Makes a host-resident adapter usable from batch slot {@code slot}; returns modeled nanos (0 if real). */
    long activate(int slot, LoadedAdapter adapter);

    /** Frees batch slot {@code slot}. */
    void deactivate(int slot);

    /** Releases an adapter's host memory. */
    default void release(LoadedAdapter adapter) {}

    /** Processes the batch and samples the next token of each sequence that wants one. */
    StepResult execute(Batch batch);

    /**
     * KV blocks this executor holds memory for, block ids {@code [0, n)}; the engine plans with exactly this many.
     * Empty when it holds none (a simulated executor), so any count the engine is configured with works.
     */
    default OptionalInt kvCacheBlocks() {
        return OptionalInt.empty();
    }

    @Override
    default void close() {}
}
