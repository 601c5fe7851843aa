package dev.patchbay.launcher.field;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where main code finds the field's programs: $PATCHBAY_TOOLS, then the checkout's .patchbay/bin, then PATH. */
class FieldToolsTest {
    @TempDir
    Path dir;

    @Test
    void patchbayToolsComesFirstThenTheCheckoutFromTheWorkingDirectoryThenTheCodeThenPath() throws Exception {
        Path tools = program(dir.resolve("tools"), "epp");
        Path checkout = checkout(dir.resolve("checkout"));
        Path inCheckout = program(checkout.resolve(".patchbay/bin"), "epp");
        Path other = checkout(dir.resolve("other"));
        Path inOther = program(other.resolve(".patchbay/bin"), "epp");
        Path onPath = program(dir.resolve("path"), "epp");
        Path below = Files.createDirectories(checkout.resolve("launcher/target"));
        Path jar = other.resolve("launcher/target/patchbay.jar");
        String path = "/nowhere:" + onPath.getParent();

        assertThat(find(Map.of("PATCHBAY_TOOLS", tools.getParent().toString(), "PATH", path), below, jar))
                .contains(tools);
        assertThat(find(Map.of("PATH", path), below, jar)).contains(inCheckout);
        assertThat(find(Map.of("PATH", path), dir, jar)).contains(inOther);
        assertThat(find(Map.of("PATH", path), dir, null)).contains(onPath);
        assertThat(find(Map.of("PATH", "/nowhere"), dir, null)).isEmpty();
        // A directory without the program is passed over.
        assertThat(find(Map.of("PATCHBAY_TOOLS", dir.toString(), "PATH", path), below, jar))
                .contains(inCheckout);
    }

    @Test
    void aMissingProgramNamesThePartOfTheScriptThatInstallsIt() {
        assertThatThrownBy(() -> FieldTools.require("surely-not-a-field-tool"))
                .isInstanceOf(FieldTools.MissingTool.class)
                .hasMessageContaining("scripts/third-party.sh");
        assertThat(FieldTools.find("surely-not-a-field-tool")).isEmpty();
    }

    private static java.util.Optional<Path> find(Map<String, String> env, Path workingDirectory, Path code) {
        return FieldTools.find("epp", env, workingDirectory, code, new ArrayList<>());
    }

    private static Path checkout(Path root) throws Exception {
        Files.createDirectories(root.resolve("scripts"));
        Files.writeString(root.resolve("scripts/third-party.sh"), "#!/bin/sh\n");
        return root;
    }

    private static Path program(Path dir, String name) throws Exception {
        Files.createDirectories(dir);
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/bin/sh\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }
}
