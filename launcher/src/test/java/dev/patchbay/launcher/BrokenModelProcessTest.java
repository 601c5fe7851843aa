package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.model.ModelGenerator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code patchbay serve} as an operator runs it, on a model directory whose tensor file is corrupt. */
class BrokenModelProcessTest {
    @TempDir
    Path dir;

    @Test
    void aCorruptTensorFileEndsTheProcessWithCode2AndOneLineOnStderr() throws Exception {
        Path model = dir.resolve("tiny");
        ModelGenerator.writeModel(model, ModelGenerator.Spec.tiny());
        Path tensors = model.resolve("model.safetensors");
        byte[] bytes = Files.readAllBytes(tensors);
        bytes[8] = '#'; // the header's JSON starts at byte 8
        Files.write(tensors, bytes);

        Process p = new ProcessBuilder(
                        ProcessHandle.current().info().command().orElse("java"),
                        "-Xmx256m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        Main.class.getName(),
                        "serve",
                        "--model",
                        model.toString(),
                        "--host",
                        "127.0.0.1",
                        "--port",
                        "0")
                .redirectOutput(dir.resolve("stdout").toFile())
                .redirectError(dir.resolve("stderr").toFile())
                .start();
        int code = p.waitFor();

        List<String> stderr = Files.readAllLines(dir.resolve("stderr"), StandardCharsets.UTF_8);
        assertThat(code).as("stderr: %s", stderr).isEqualTo(2);
        List<String> errors =
                stderr.stream().filter(l -> !l.startsWith("Loading ")).toList();
        assertThat(errors).hasSize(1);
        assertThat(errors.getFirst())
                .startsWith("patchbay serve: ")
                .contains(tensors.toString())
                .contains("safetensors header is not valid JSON");
        assertThat(Files.readString(dir.resolve("stdout"))).doesNotContain("serving");
    }
}
