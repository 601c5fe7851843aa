package dev.patchbay.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.model.ModelGenerator;
import dev.patchbay.server.PatchbayServer;
import dev.patchbay.server.ServeCommand;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Log probabilities over HTTP from the real executor: a greedy token's value is its dict's largest, and the
 * distribution a decode step reports equals the one the same position reports as a prompt, per adapter.
 */
class RealModelLogprobsTest {
    static final String PROMPT_IDS = "[1, 40, 41, 42, 43, 44, 45, 46]";

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newHttpClient();

    private JsonNode complete(int port, String body) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return new ObjectMapper().readTree(r.body()).get("choices").get(0);
    }

    private static List<Double> values(JsonNode dict, boolean promptForm) {
        List<Double> out = new ArrayList<>();
        dict.fields()
                .forEachRemaining(e -> out.add(
                        promptForm
                                ? e.getValue().get("logprob").asDouble()
                                : e.getValue().asDouble()));
        out.sort(Comparator.reverseOrder());
        return out;
    }

    @Test
    void decodeAndPromptPositionsAgreePerAdapter() throws Exception {
        ModelGenerator.Spec spec = ModelGenerator.Spec.tiny();
        Path model = dir.resolve("tiny");
        ModelGenerator.writeModel(model, spec);
        ModelGenerator.writeAdapter(dir.resolve("a"), spec, 8, 64, List.of("q_proj", "v_proj", "down_proj"), 1);
        PatchbayServer server = PatchbayServer.start(ServeCommand.parse(
                "--model",
                model.toString(),
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--enable-lora",
                "--lora-modules",
                "a=" + dir.resolve("a"),
                "--num-gpu-blocks-override",
                "256"));
        try {
            List<Double> last = new ArrayList<>();
            for (String name : List.of("tiny", "a")) {
                // The whole prompt, asking for its log probabilities.
                JsonNode prompt = complete(
                                server.port(),
                                "{\"model\":\"" + name + "\",\"prompt\":" + PROMPT_IDS
                                        + ",\"max_tokens\":1,\"prompt_logprobs\":4}")
                        .get("prompt_logprobs");
                // The prompt without its last token, generating that position greedily instead.
                String shorter = PROMPT_IDS.substring(0, PROMPT_IDS.lastIndexOf(',')) + "]";
                JsonNode gen = complete(
                                server.port(),
                                "{\"model\":\"" + name + "\",\"prompt\":" + shorter
                                        + ",\"max_tokens\":1,\"temperature\":0,\"logprobs\":4}")
                        .get("logprobs");
                double sampled = gen.get("token_logprobs").get(0).asDouble();
                List<Double> decoded = values(gen.get("top_logprobs").get(0), false);
                assertThat(sampled).as("the greedy token has the largest value").isEqualTo(decoded.get(0));

                List<Double> prefilled = values(prompt.get(prompt.size() - 1), true);
                assertThat(prefilled.get(0)).as("%s: the most likely", name).isCloseTo(sampled, within(1e-3));
                // The generated token's dict is keyed by text, where tokens may share one entry; each value shown
                // is still one of the top tokens' that the prompt's dict, keyed by id, lists.
                for (double v : decoded) {
                    assertThat(prefilled)
                            .as("%s: %s among the prompt's top values", name, v)
                            .anySatisfy(p -> assertThat(p).isCloseTo(v, within(1e-3)));
                }
                if (!last.isEmpty())
                    assertThat(Math.abs(last.get(0) - prefilled.get(0)))
                            .as("the adapter matters")
                            .isGreaterThan(1e-3);
                last = prefilled;
            }
        } finally {
            server.stop();
        }
    }
}
