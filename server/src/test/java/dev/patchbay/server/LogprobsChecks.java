package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/** Assertions shared by the log probability tests: values well-formed, errors naming their parameter. */
final class LogprobsChecks {
    private LogprobsChecks() {}

    static void assertLogprob(JsonNode v) {
        assertThat(v.isNumber()).as("a logprob is a number: %s", v).isTrue();
        assertThat(Double.isFinite(v.asDouble())).isTrue();
        assertThat(v.asDouble()).isLessThanOrEqualTo(0.0);
    }

    /** Checks a legacy completions logprobs object; returns its tokens. */
    static List<String> assertCompletionLogprobs(JsonNode lp, int topN, int expectedTokens, int firstOffset) {
        List<String> tokens = new ArrayList<>();
        lp.get("tokens").forEach(t -> tokens.add(t.asText()));
        assertThat(tokens).hasSize(expectedTokens);
        assertThat(lp.get("token_logprobs")).hasSize(expectedTokens);
        assertThat(lp.get("top_logprobs")).hasSize(expectedTokens);
        assertThat(lp.get("text_offset")).hasSize(expectedTokens);
        int offset = firstOffset;
        for (int i = 0; i < expectedTokens; i++) {
            assertThat(lp.get("text_offset").get(i).asInt())
                    .as("text_offset %d", i)
                    .isEqualTo(offset);
            offset += tokens.get(i).codePointCount(0, tokens.get(i).length());
            JsonNode value = lp.get("token_logprobs").get(i);
            JsonNode top = lp.get("top_logprobs").get(i);
            if (value.isNull()) {
                assertThat(top.isNull()).isTrue();
                continue;
            }
            assertLogprob(value);
            assertThat(top.isObject()).isTrue();
            // The sampled token is in its dict beside N others at most; keys are texts, so tokens with the same
            // text (pieces of UTF-8 characters) share one entry and the dict may hold fewer.
            assertThat(top.get(tokens.get(i)))
                    .as("token %d in its top_logprobs", i)
                    .isNotNull();
            assertThat(top.get(tokens.get(i)).asDouble())
                    .as("token %d's own value in its dict", i)
                    .isEqualTo(value.asDouble());
            assertThat(top.size()).isBetween(1, topN + 1);
            for (Iterator<Map.Entry<String, JsonNode>> it = top.fields(); it.hasNext(); )
                assertLogprob(it.next().getValue());
        }
        return tokens;
    }

    /** Checks chat's logprobs content list; returns the tokens' text joined. */
    static String assertChatContent(JsonNode content, int topN) {
        StringBuilder text = new StringBuilder();
        for (JsonNode e : content) {
            String token = e.get("token").asText();
            text.append(token);
            assertLogprob(e.get("logprob"));
            assertThat(bytes(e.get("bytes"))).isEqualTo(token);
            JsonNode top = e.get("top_logprobs");
            assertThat(top).hasSize(topN);
            double previous = 0;
            for (JsonNode t : top) {
                assertLogprob(t.get("logprob"));
                assertThat(t.get("logprob").asDouble())
                        .as("top_logprobs descending")
                        .isLessThanOrEqualTo(previous);
                previous = t.get("logprob").asDouble();
                assertThat(bytes(t.get("bytes"))).isEqualTo(t.get("token").asText());
                if (t.get("token").asText().equals(token))
                    assertThat(t.get("logprob").asDouble())
                            .isEqualTo(e.get("logprob").asDouble());
            }
            if (topN > 0)
                assertThat(e.get("logprob").asDouble())
                        .isLessThanOrEqualTo(top.get(0).get("logprob").asDouble());
        }
        return text.toString();
    }

    private static String bytes(JsonNode list) {
        byte[] b = new byte[list.size()];
        for (int i = 0; i < b.length; i++) b[i] = (byte) list.get(i).asInt();
        return new String(b, StandardCharsets.UTF_8);
    }

    static void assertBadParam(HttpResponse<String> r, String param) throws Exception {
        assertThat(r.statusCode()).as("status of %s", r.body()).isEqualTo(400);
        JsonNode e = ServerHarness.json(r).get("error");
        assertThat(e.get("param").asText()).isEqualTo(param);
        assertThat(e.get("type").asText()).isEqualTo("BadRequestError");
        assertThat(e.get("code").asInt()).isEqualTo(400);
        assertThat(e.get("message").asText()).contains(param);
    }

    /** The JSON events of a server-sent event stream, without the closing {@code [DONE]}. */
    static List<JsonNode> events(HttpResponse<String> r) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        List<JsonNode> out = new ArrayList<>();
        String[] blocks = r.body().split("\n\n");
        assertThat(blocks[blocks.length - 1]).isEqualTo("data: [DONE]");
        for (int i = 0; i < blocks.length - 1; i++) {
            assertThat(blocks[i]).startsWith("data: ");
            out.add(ServerHarness.JSON.readTree(blocks[i].substring(6)));
        }
        return out;
    }
}
