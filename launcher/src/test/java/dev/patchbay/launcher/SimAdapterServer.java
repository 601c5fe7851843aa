package dev.patchbay.launcher;

import dev.patchbay.engine.adapter.PeftWriter;
import dev.patchbay.engine.sim.SimModel;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code patchbay serve} on the simulated model that knows a set of PEFT adapters written to one folder: the server
 * the process and fleet tests start, so that each says only what differs (slots, tiers, latency, extra flags).
 *
 * @param simLatencyMs the {@code --sim-latency-ms} value
 */
record SimAdapterServer(
        String base, Path dir, List<String> adapters, int maxLoras, int maxCpuLoras, String simLatencyMs) {

    static final String SIM_LATENCY_MS = "2,0.01,0.1,0.2,80,3";

    /** Writes each adapter's PEFT files (rank 8 on q_proj and v_proj, weights seeded by its name). */
    SimAdapterServer writeAdapters() throws IOException {
        for (String adapter : adapters) {
            PeftWriter.write(
                    dir.resolve(adapter),
                    SimModel.DEFAULT_CONFIG,
                    base,
                    8,
                    16,
                    List.of("q_proj", "v_proj"),
                    adapter.hashCode());
        }
        return this;
    }

    /** The arguments after {@code serve}: listening on {@code port} (0: any free one), then {@code extra}. */
    String[] args(int port, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "--model",
                "sim:" + base,
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--demo-adapters",
                "0",
                "--enable-lora",
                "--max-loras",
                Integer.toString(maxLoras),
                "--max-cpu-loras",
                Integer.toString(maxCpuLoras),
                "--sim-latency-ms",
                simLatencyMs,
                "--lora-allowed-dirs",
                dir.toString()));
        // Every server knows every adapter; only what is resident differs.
        for (String adapter : adapters) {
            args.addAll(List.of("--lora-modules", adapter + "=" + dir.resolve(adapter)));
        }
        args.addAll(List.of(extra));
        return args.toArray(String[]::new);
    }

    /** The whole launcher command line: {@code serve} and {@link #args}. */
    String[] serveCommand(int port, String... extra) {
        List<String> command = new ArrayList<>(List.of("serve"));
        command.addAll(List.of(args(port, extra)));
        return command.toArray(String[]::new);
    }
}
