package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.format.Safetensors;
import dev.patchbay.engine.format.SafetensorsWriter;
import dev.patchbay.model.ModelGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code patchbay serve} on a generated model directory that is then broken: it exits with 2 and one line on stderr
 * that names the file and what is wrong with it, never a stack trace.
 */
class BrokenModelDirTest {
    private static final Function<Path, String[]> SERVE_ARGS = m -> new String[] {
        "--model",
        m.toString(),
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--kv-cache-memory-bytes",
        "1M",
        "--max-model-len",
        "256"
    };

    @TempDir
    Path dir;

    Path model;

    @BeforeEach
    void writeModel() throws IOException {
        model = dir.resolve("tiny");
        ModelGenerator.writeModel(model, ModelGenerator.Spec.tiny());
    }

    /** What a serve run left: its exit code and stderr lines. */
    private record Run(int exitCode, List<String> stderr, String stdout) {
        /** The one error line; progress lines ("Loading ...") may come before it. */
        String errorLine() {
            List<String> errors =
                    stderr.stream().filter(l -> l.startsWith("patchbay serve:")).toList();
            assertThat(errors).as("stderr: %s", stderr).hasSize(1);
            return errors.getFirst();
        }
    }

    private Run serve() {
        PrintStream oldErr = System.err, oldOut = System.out;
        ByteArrayOutputStream err = new ByteArrayOutputStream(), out = new ByteArrayOutputStream();
        int code;
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            // Built after the streams are swapped: picocli keeps the ones it finds.
            code = new CommandLine(new ServeCommand()).execute(SERVE_ARGS.apply(model));
        } finally {
            System.setErr(oldErr);
            System.setOut(oldOut);
        }
        return new Run(
                code, err.toString(StandardCharsets.UTF_8).lines().toList(), out.toString(StandardCharsets.UTF_8));
    }

    private void assertRefused(Path file, String problem) {
        Run r = serve();
        assertThat(r.exitCode()).as("stderr: %s", r.stderr()).isEqualTo(2);
        String line = r.errorLine();
        assertThat(line).contains(file.toString()).contains(problem);
        // Besides the load's progress lines, that line is all: no continuation, no stack trace.
        assertThat(r.stderr()).as("stderr").allMatch(l -> l.equals(line) || l.startsWith("Loading "));
        assertThat(r.stderr())
                .noneMatch(l -> l.startsWith("\tat ")
                        || l.startsWith("Caused by")
                        || l.matches("(\\w+\\.)+\\w*(Exception|Error)\\b.*"));
        assertThat(r.stdout()).doesNotContain("serving");
    }

    private void editConfig(String field, Object value) throws IOException {
        ObjectMapper om = new ObjectMapper();
        Path file = model.resolve("config.json");
        ObjectNode c = (ObjectNode) om.readTree(file.toFile());
        c.set(field, om.valueToTree(value));
        om.writeValue(file.toFile(), c);
    }

    /** Rewrites model.safetensors with each tensor's shape mapped, or left out where the mapping gives null. */
    private void rewriteTensors(Function<Safetensors.TensorInfo, long[]> shapeOf) throws IOException {
        Path file = model.resolve("model.safetensors");
        Safetensors st = Safetensors.readHeader(file);
        byte[] all = Files.readAllBytes(file);
        SafetensorsWriter w = new SafetensorsWriter();
        for (Safetensors.TensorInfo t : st.tensors().values()) {
            long[] shape = shapeOf.apply(t);
            if (shape == null) continue;
            int from = (int) (st.dataStart() + t.begin());
            w.add(t.name(), t.dtype(), shape, Arrays.copyOfRange(all, from, from + (int) t.byteSize()));
        }
        w.write(file);
    }

    @Test
    void theDirectoryServesBeforeItIsBroken() throws Exception {
        // The control: the same flags on the intact directory start a server, so each failure below is the
        // breakage's doing. (serve() itself would run until the JVM ends.)
        PatchbayServer server = PatchbayServer.start(ServeCommand.parse(SERVE_ARGS.apply(model)));
        server.stop();
    }

    @Test
    void anUnsupportedArchitecture() throws IOException {
        editConfig("architectures", List.of("GPT2LMHeadModel"));
        assertRefused(model.resolve("config.json"), "architecture GPT2LMHeadModel is not supported");
    }

    @Test
    void aMissingTensor() throws IOException {
        rewriteTensors(t -> t.name().equals("model.layers.1.mlp.down_proj.weight") ? null : t.shape());
        assertRefused(
                model.resolve("model.safetensors"), "the weights lack tensor 'model.layers.1.mlp.down_proj.weight'");
    }

    @Test
    void aTensorOfTheWrongShape() throws IOException {
        // The same bytes, transposed in the header: [128, 64] becomes [64, 128].
        rewriteTensors(t -> t.name().equals("model.layers.0.mlp.up_proj.weight")
                ? new long[] {t.shape()[1], t.shape()[0]}
                : t.shape());
        assertRefused(
                model.resolve("model.safetensors"),
                "tensor 'model.layers.0.mlp.up_proj.weight' has shape [64, 128] but the config needs [128, 64]");
    }

    @Test
    void aCorruptSafetensorsHeader() throws IOException {
        Path file = model.resolve("model.safetensors");
        byte[] bytes = Files.readAllBytes(file);
        bytes[8] = '#'; // the header's JSON starts at byte 8
        Files.write(file, bytes);
        assertRefused(file, "safetensors header is not valid JSON");

        // A header length that points past the end of the file.
        Arrays.fill(bytes, 0, 8, (byte) 0x7f);
        Files.write(file, bytes);
        assertRefused(file, "invalid safetensors header length");
    }

    @Test
    void aMissingTokenizer() throws IOException {
        Files.delete(model.resolve("tokenizer.json"));
        assertRefused(model, "no tokenizer.json");
    }

    @Test
    void aTokenizerWithAnImpossibleTokenId() throws IOException {
        // Beyond what the checks name: the one line still names the file.
        Path file = model.resolve("tokenizer.json");
        ObjectMapper om = new ObjectMapper();
        ObjectNode t = (ObjectNode) om.readTree(file.toFile());
        ((ObjectNode) t.withArray("added_tokens").get(0)).put("id", Integer.MAX_VALUE);
        om.writeValue(file.toFile(), t);
        assertRefused(file, "cannot be read");
    }

    @Test
    void aMissingConfig() throws IOException {
        Files.delete(model.resolve("config.json"));
        assertRefused(model, "no config.json");
    }

    @Test
    void aConfigThatIsNotJson() throws IOException {
        Files.writeString(model.resolve("config.json"), "{\"hidden_size\": 64,\n\"layers\": [1, 2\n");
        assertRefused(model.resolve("config.json"), "not valid JSON");
    }
}
