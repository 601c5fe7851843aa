package dev.patchbay.bench.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

class TypedCommandTest {
    @Command(name = "sweep")
    static class Sub implements Runnable {
        @Spec
        CommandSpec spec;

        @Option(names = "--seeds")
        int seeds;

        String typed;

        @Override
        public void run() {
            typed = TypedCommand.of(spec, "sweep");
        }
    }

    @Command(name = "patchbay")
    static class Top {}

    @Test
    void aSubcommandRunUnderTheLauncherIsRecordedOnceByName() {
        Sub sub = new Sub();
        new CommandLine(new Top()).addSubcommand(sub).execute("sweep", "--seeds", "5");
        assertThat(sub.typed).isEqualTo("patchbay sweep --seeds 5");
    }

    @Test
    void aSubcommandRunOnItsOwnIsRecordedWithItsName() {
        Sub sub = new Sub();
        new CommandLine(sub).execute("--seeds", "5");
        assertThat(sub.typed).isEqualTo("patchbay sweep --seeds 5");
    }
}
