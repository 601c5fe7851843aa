package dev.patchbay.launcher;

import java.util.List;
import java.util.concurrent.Callable;
import org.openjdk.jmh.Main;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code patchbay jmh [JMH options] [benchmark regex]}: runs the JMH benchmarks shipped in the jar. */
@Command(name = "jmh", description = "Run JMH benchmarks (arguments go to JMH; -h for its help).")
public final class JmhCommand implements Callable<Integer> {
    @Parameters(arity = "0..*", description = "JMH arguments")
    List<String> args = List.of();

    @Override
    public Integer call() throws Exception {
        run(args.toArray(String[]::new));
        return 0;
    }

    static void run(String[] jmhArgs) throws Exception {
        Main.main(jmhArgs);
    }
}
