package dev.patchbay.engine.exec;

import dev.patchbay.engine.adapter.AdapterSpec;

/**
 * An adapter's weights in host memory, in whatever form its executor keeps them.
 *
 * @param weights  the executor's own representation (null for the simulated executor)
 * @param bytes    host memory the weights take
 */
public record LoadedAdapter(AdapterSpec spec, Object weights, long bytes) {}
