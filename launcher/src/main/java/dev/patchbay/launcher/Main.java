package dev.patchbay.launcher;

import dev.patchbay.bench.sim.SimulateCommand;
import dev.patchbay.bench.sim.SweepCommand;
import dev.patchbay.engine.PatchbayVersion;
import dev.patchbay.launcher.conformance.ConformanceCommand;
import dev.patchbay.launcher.gateway.GatewayCommand;
import dev.patchbay.launcher.peers.PeersBenchCommand;
import dev.patchbay.launcher.placement.PlacementBenchCommand;
import dev.patchbay.model.GenerateModelCommand;
import dev.patchbay.router.RouteCommand;
import dev.patchbay.server.ServeCommand;
import java.util.Arrays;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code patchbay} command: one jar, one subcommand per part. */
@Command(
        name = "patchbay",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Serve many LoRA adapters on shared base models and route their traffic.",
        subcommands = {
            ServeCommand.class,
            RouteCommand.class,
            GatewayCommand.class,
            ConformanceCommand.class,
            PeersBenchCommand.class,
            PlacementBenchCommand.class,
            SimulateCommand.class,
            SweepCommand.class,
            GenerateModelCommand.class,
            JmhCommand.class
        })
public final class Main implements Runnable {
    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    /** {@code patchbay --version}: this build's. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"Patchbay " + PatchbayVersion.VERSION};
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("jmh")) {
            // JMH's own options start with '-': hand them over untouched.
            JmhCommand.run(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        System.exit(new CommandLine(new Main()).execute(args));
    }
}
