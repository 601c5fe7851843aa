package dev.patchbay.server;

import static dev.patchbay.server.LogprobsChecks.assertBadParam;
import static dev.patchbay.server.LogprobsChecks.assertChatContent;
import static dev.patchbay.server.LogprobsChecks.events;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** {@code /v1/chat/completions} with {@code logprobs} and {@code top_logprobs} on the simulated model. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ChatLogprobsTest {
    static final String MESSAGES = "\"messages\":[{\"role\":\"user\",\"content\":\"say something\"}]";

    @TempDir
    static Path dir;

    ServerHarness h;

    @BeforeAll
    void start() throws Exception {
        h = new ServerHarness(dir, List.of("alpha"), "--enable-lora", "--sim-latency-ms", "0,0,0,0,0,0");
    }

    @AfterAll
    void stop() {
        h.close();
    }

    private HttpResponse<String> chat(String extra) throws Exception {
        return h.post(
                "/v1/chat/completions",
                "{\"model\":\"alpha\"," + MESSAGES + ",\"max_tokens\":5,\"ignore_eos\":true" + extra + "}");
    }

    private JsonNode ok(String extra) throws Exception {
        var r = chat(extra);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return ServerHarness.json(r);
    }

    @Test
    void logprobsListEachTokenWithItsTopAlternatives() throws Exception {
        JsonNode choice =
                ok(",\"logprobs\":true,\"top_logprobs\":3").get("choices").get(0);
        JsonNode content = choice.get("logprobs").get("content");
        assertThat(content).hasSize(5);
        assertThat(assertChatContent(content, 3))
                .isEqualTo(choice.get("message").get("content").asText());
    }

    @Test
    void logprobsWithoutTopLogprobsGiveEmptyTopLists() throws Exception {
        JsonNode content =
                ok(",\"logprobs\":true").get("choices").get(0).get("logprobs").get("content");
        assertThat(content).hasSize(5);
        assertChatContent(content, 0);
    }

    @Test
    void withoutLogprobsTheFieldIsNull() throws Exception {
        JsonNode answer = ok(",\"logprobs\":false");
        assertThat(answer.get("choices").get(0).get("logprobs").isNull()).isTrue();
        assertThat(answer.get("prompt_logprobs").isNull()).isTrue();
    }

    @Test
    void eachChoiceOfNHasItsOwnLogprobs() throws Exception {
        JsonNode choices = ok(",\"logprobs\":true,\"top_logprobs\":2,\"n\":3").get("choices");
        assertThat(choices).hasSize(3);
        for (JsonNode c : choices) {
            assertThat(assertChatContent(c.get("logprobs").get("content"), 2))
                    .isEqualTo(c.get("message").get("content").asText());
        }
    }

    @Test
    void promptLogprobsComeBesideTheChoices() throws Exception {
        JsonNode answer = ok(",\"prompt_logprobs\":1");
        JsonNode prompt = answer.get("prompt_logprobs");
        assertThat(prompt).hasSize(answer.get("usage").get("prompt_tokens").asInt());
        assertThat(prompt.get(0).isNull()).isTrue();
        assertThat(prompt.get(1).size()).isBetween(1, 2);
    }

    @Test
    void streamedChunksCarryTheirTokensLogprobs() throws Exception {
        List<JsonNode> events = events(chat(",\"logprobs\":true,\"top_logprobs\":2,\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true}"));
        JsonNode role = events.get(0).get("choices").get(0);
        assertThat(role.get("delta").get("role").asText()).isEqualTo("assistant");
        assertThat(role.get("logprobs").isNull()).isTrue();
        StringBuilder text = new StringBuilder();
        StringBuilder tokens = new StringBuilder();
        int count = 0;
        for (JsonNode e : events.subList(1, events.size() - 1)) {
            JsonNode c = e.get("choices").get(0);
            JsonNode content = c.get("logprobs").get("content");
            tokens.append(assertChatContent(content, 2));
            count += content.size();
            text.append(c.get("delta").get("content").asText());
        }
        assertThat(count)
                .isEqualTo(events.get(events.size() - 1)
                        .get("usage")
                        .get("completion_tokens")
                        .asInt())
                .isEqualTo(5);
        assertThat(tokens.toString()).isEqualTo(text.toString());
    }

    @Test
    void topLogprobsNeedLogprobsTrue() throws Exception {
        assertBadParam(chat(",\"top_logprobs\":2"), "top_logprobs");
        assertBadParam(chat(",\"logprobs\":false,\"top_logprobs\":0"), "top_logprobs");
    }

    @Test
    void outOfRangeOrMistypedValuesAreRefusedNamingTheParameter() throws Exception {
        for (String bad : List.of("-2", "21", "100", "\"2\"", "1.5", "true")) {
            assertBadParam(chat(",\"logprobs\":true,\"top_logprobs\":" + bad), "top_logprobs");
        }
        assertBadParam(chat(",\"logprobs\":\"yes\""), "logprobs");
        assertBadParam(chat(",\"logprobs\":1"), "logprobs");
        assertBadParam(chat(",\"prompt_logprobs\":21"), "prompt_logprobs");
        assertThat(chat(",\"logprobs\":true,\"top_logprobs\":20").statusCode()).isEqualTo(200);
    }
}
