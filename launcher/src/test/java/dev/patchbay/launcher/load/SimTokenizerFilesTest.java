package dev.patchbay.launcher.load;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.engine.sim.SimTokenizer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tokenizer file has the simulated model's ids. That a Hugging Face tokenizer loading it splits text as the server
 * does is shown by aiperf itself: in the captured runs (test resources aiperf/) every request's
 * {@code input_sequence_length}, counted by aiperf with this file, equals {@code usage_prompt_tokens}, counted by the
 * server ({@code usage_prompt_tokens_diff_pct} 0), and {@code AiperfLoadTest} checks the server's token counters.
 */
class SimTokenizerFilesTest {
    @TempDir
    Path tmp;

    @Test
    void theVocabularyIsTheSimulatedModelsIds() throws Exception {
        Path dir = SimTokenizerFiles.write(tmp.resolve("tok"));
        JsonNode root =
                new ObjectMapper().readTree(dir.resolve("tokenizer.json").toFile());
        JsonNode vocab = root.path("model").path("vocab");
        SimTokenizer sim = new SimTokenizer();

        assertThat(vocab.size()).isEqualTo(sim.vocabSize());
        assertThat(vocab.path("<0x00>").asInt()).isZero();
        assertThat(vocab.path("<0x41>").asInt()).isEqualTo('A');
        assertThat(vocab.path("<0xFF>").asInt()).isEqualTo(255);
        assertThat(vocab.path("</s>").asInt()).isEqualTo(sim.eosTokenId());
        for (int id = sim.firstWordId(); id < sim.vocabSize(); id++) {
            String word = new String(sim.tokenBytes(id), StandardCharsets.UTF_8);
            assertThat(vocab.path(word).asInt()).as(word).isEqualTo(id);
        }
        int[] theWater = sim.encode(" the water");
        assertThat(theWater)
                .containsExactly(
                        vocab.path(" the").asInt(), vocab.path(" water").asInt());

        assertThat(root.path("model").path("byte_fallback").asBoolean()).isTrue();
        assertThat(root.path("model").path("ignore_merges").asBoolean()).isTrue();
        assertThat(root.path("pre_tokenizer").path("pattern").path("Regex").asText())
                .isEqualTo(" ?[A-Za-z]+|.");
        assertThat(new ObjectMapper()
                        .readTree(dir.resolve("tokenizer_config.json").toFile())
                        .path("tokenizer_class")
                        .asText())
                .isEqualTo("PreTrainedTokenizerFast");
    }
}
