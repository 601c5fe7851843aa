package dev.patchbay.server;

import static dev.patchbay.server.LogprobsChecks.assertBadParam;
import static dev.patchbay.server.LogprobsChecks.assertCompletionLogprobs;
import static dev.patchbay.server.LogprobsChecks.assertLogprob;
import static dev.patchbay.server.LogprobsChecks.events;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.sim.SimTokenizer;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** {@code /v1/completions} with {@code logprobs}, {@code echo} and {@code prompt_logprobs} on the simulated model. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CompletionLogprobsTest {
    static final String PROMPT = "the water is good";

    @TempDir
    static Path dir;

    ServerHarness h;

    @BeforeAll
    void start() throws Exception {
        // Prefix caching on, with small blocks: a prompt asking for prompt_logprobs must still be computed whole.
        h = new ServerHarness(
                dir,
                List.of("alpha"),
                "--enable-lora",
                "--enable-prefix-caching",
                "--block-size",
                "2",
                "--sim-latency-ms",
                "0,0,0,0,0,0");
    }

    @AfterAll
    void stop() {
        h.close();
    }

    private JsonNode complete(String extra) throws Exception {
        var r = h.post(
                "/v1/completions",
                "{\"model\":\"alpha\",\"prompt\":\"" + PROMPT + "\",\"max_tokens\":6," + "\"ignore_eos\":true" + extra
                        + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return ServerHarness.json(r);
    }

    private static int promptLength() {
        return new SimTokenizer().encode(PROMPT).length;
    }

    @Test
    void logprobsGiveTokensValuesTopDictsAndOffsets() throws Exception {
        JsonNode choice = complete(",\"logprobs\":3").get("choices").get(0);
        List<String> tokens = assertCompletionLogprobs(choice.get("logprobs"), 3, 6, 0);
        assertThat(String.join("", tokens)).isEqualTo(choice.get("text").asText());
        assertThat(choice.get("prompt_logprobs").isNull()).isTrue();
    }

    @Test
    void logprobsZeroGivesOnlyTheSampledToken() throws Exception {
        JsonNode lp = complete(",\"logprobs\":0").get("choices").get(0).get("logprobs");
        assertCompletionLogprobs(lp, 0, 6, 0);
        lp.get("top_logprobs").forEach(d -> assertThat(d.size()).isEqualTo(1));
    }

    @Test
    void withoutLogprobsTheFieldIsNull() throws Exception {
        JsonNode choice = complete("").get("choices").get(0);
        assertThat(choice.get("logprobs").isNull()).isTrue();
        assertThat(choice.get("prompt_logprobs").isNull()).isTrue();
    }

    @Test
    void sameSeedGivesTheSameLogprobs() throws Exception {
        JsonNode a =
                complete(",\"logprobs\":5,\"seed\":7").get("choices").get(0).get("logprobs");
        JsonNode b =
                complete(",\"logprobs\":5,\"seed\":7").get("choices").get(0).get("logprobs");
        assertThat(a).isEqualTo(b);
    }

    @Test
    void echoWithLogprobsCoversThePromptFirstNull() throws Exception {
        JsonNode choice =
                complete(",\"logprobs\":2,\"echo\":true").get("choices").get(0);
        String text = choice.get("text").asText();
        assertThat(text).startsWith(PROMPT);
        int p = promptLength();
        JsonNode lp = choice.get("logprobs");
        List<String> tokens = assertCompletionLogprobs(lp, 2, p + 6, 0);
        assertThat(String.join("", tokens)).isEqualTo(text);
        assertThat(lp.get("token_logprobs").get(0).isNull()).isTrue();
        assertThat(lp.get("top_logprobs").get(0).isNull()).isTrue();
        for (int i = 1; i < p + 6; i++) assertLogprob(lp.get("token_logprobs").get(i));
        // As in vLLM, echo with logprobs also asks for the prompt's own, which come back beside them.
        JsonNode prompt = choice.get("prompt_logprobs");
        assertThat(prompt).hasSize(p);
        for (int i = 1; i < p; i++) {
            JsonNode entry = prompt.get(i).get(Integer.toString(new SimTokenizer().encode(PROMPT)[i]));
            assertThat(entry.get("logprob").asDouble())
                    .isEqualTo(lp.get("token_logprobs").get(i).asDouble());
        }
    }

    @Test
    void echoWithoutLogprobsPrependsThePromptOnly() throws Exception {
        JsonNode choice = complete(",\"echo\":true").get("choices").get(0);
        assertThat(choice.get("text").asText()).startsWith(PROMPT).hasSizeGreaterThan(PROMPT.length());
        assertThat(choice.get("logprobs").isNull()).isTrue();
    }

    @Test
    void promptLogprobsListEachPromptTokenAfterTheFirst() throws Exception {
        int[] ids = new SimTokenizer().encode(PROMPT);
        // Twice: the second run finds the prompt's blocks cached and must compute them anyway.
        JsonNode first = null;
        for (int run = 0; run < 2; run++) {
            JsonNode choice = complete(",\"prompt_logprobs\":2").get("choices").get(0);
            assertThat(choice.get("logprobs").isNull()).isTrue();
            JsonNode prompt = choice.get("prompt_logprobs");
            assertThat(prompt).hasSize(ids.length);
            assertThat(prompt.get(0).isNull()).isTrue();
            for (int i = 1; i < ids.length; i++) {
                JsonNode dict = prompt.get(i);
                assertThat(dict.size()).isBetween(2, 3);
                JsonNode own = dict.get(Integer.toString(ids[i]));
                assertThat(own).as("prompt token %d in its dict", i).isNotNull();
                assertLogprob(own.get("logprob"));
                assertThat(own.get("rank").asInt()).isGreaterThanOrEqualTo(1);
                assertThat(own.get("decoded_token").asText()).isEqualTo(new SimTokenizer().decode(new int[] {ids[i]}));
                dict.fields().forEachRemaining(e -> assertLogprob(e.getValue().get("logprob")));
            }
            if (first != null) assertThat(prompt).isEqualTo(first);
            first = prompt;
        }
    }

    @Test
    void eachChoiceOfNHasItsOwnLogprobs() throws Exception {
        JsonNode choices = complete(",\"logprobs\":1,\"n\":2,\"seed\":3").get("choices");
        assertThat(choices).hasSize(2);
        for (JsonNode c : choices) {
            List<String> tokens = assertCompletionLogprobs(c.get("logprobs"), 1, 6, 0);
            assertThat(String.join("", tokens)).isEqualTo(c.get("text").asText());
        }
        assertThat(choices.get(0).get("logprobs")).isNotEqualTo(choices.get(1).get("logprobs"));
    }

    @Test
    void streamedChunksCarryTheirTokensLogprobs() throws Exception {
        var r = h.post(
                "/v1/completions",
                "{\"model\":\"alpha\",\"prompt\":\"" + PROMPT + "\",\"max_tokens\":6,"
                        + "\"ignore_eos\":true,\"stream\":true,\"logprobs\":2,\"echo\":true}");
        List<JsonNode> events = events(r);
        StringBuilder text = new StringBuilder();
        List<String> tokens = new ArrayList<>();
        int offset = 0;
        for (JsonNode e : events) {
            JsonNode c = e.get("choices").get(0);
            JsonNode lp = c.get("logprobs");
            int count = lp.get("tokens").size();
            tokens.addAll(assertCompletionLogprobs(lp, 2, count, offset));
            for (int i = 0; i < count; i++)
                offset += lp.get("tokens")
                        .get(i)
                        .asText()
                        .codePointCount(0, lp.get("tokens").get(i).asText().length());
            text.append(c.get("text").asText());
        }
        assertThat(tokens).hasSize(promptLength() + 6);
        assertThat(String.join("", tokens)).isEqualTo(text.toString());
        assertThat(text.toString()).startsWith(PROMPT);
        JsonNode first = events.get(0).get("choices").get(0).get("logprobs");
        assertThat(first.get("token_logprobs").get(0).isNull()).isTrue();
    }

    @Test
    void limitFollowsMaxLogprobs() throws Exception {
        // prompt_logprobs dicts are keyed by token id, so their size is exact: the N most likely and the prompt's own.
        JsonNode prompt = complete(",\"logprobs\":20,\"prompt_logprobs\":20")
                .get("choices")
                .get(0)
                .get("prompt_logprobs");
        for (int i = 1; i < prompt.size(); i++) assertThat(prompt.get(i).size()).isBetween(20, 21);
        assertBadParam(post(",\"logprobs\":21"), "logprobs");
        try (ServerHarness wide = new ServerHarness(dir, List.of(), "--max-logprobs", "-1")) {
            var r = wide.post(
                    "/v1/completions",
                    "{\"prompt\":\"hi there\",\"max_tokens\":1,\"ignore_eos\":true,"
                            + "\"logprobs\":-1,\"prompt_logprobs\":-1}");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode wholeVocabulary = ServerHarness.json(r)
                    .get("choices")
                    .get(0)
                    .get("prompt_logprobs")
                    .get(1);
            assertThat(wholeVocabulary.size()).isEqualTo(new SimTokenizer().vocabSize());
        }
    }

    private HttpResponse<String> post(String extra) throws Exception {
        return h.post("/v1/completions", "{\"model\":\"alpha\",\"prompt\":\"hi\",\"max_tokens\":2" + extra + "}");
    }

    @Test
    void outOfRangeOrMistypedCountsAreRefusedNamingTheParameter() throws Exception {
        for (String bad : List.of("100", "-1", "-2", "\"3\"", "true", "1.5")) {
            assertBadParam(post(",\"logprobs\":" + bad), "logprobs");
            assertBadParam(post(",\"prompt_logprobs\":" + bad), "prompt_logprobs");
        }
        assertBadParam(post(",\"echo\":\"yes\""), "echo");
        assertBadParam(post(",\"prompt_logprobs\":1,\"stream\":true"), "prompt_logprobs");
    }
}
