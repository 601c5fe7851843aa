package dev.patchbay.bench.sim;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;

/** The command line a user typed for a subcommand, as {@code patchbay <name> <args>}, for the record a run writes. */
final class TypedCommand {
    private TypedCommand() {}

    static String of(CommandSpec spec, String name) {
        if (spec == null) return name;
        List<String> args = new ArrayList<>(spec.commandLine().getParseResult().originalArgs());
        // Run under the launcher, the arguments start with the subcommand's own name.
        if (!args.isEmpty() && args.getFirst().equals(name)) args.removeFirst();
        args.addFirst(name);
        return "patchbay " + String.join(" ", args);
    }
}
