package dev.patchbay.router.route;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class PromptSizeTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static long estimate(String body) throws Exception {
        return PromptSize.estimateTokens(JSON.readTree(body));
    }

    @Test
    void textCountsATokenPerFourCharactersRoundedUp() throws Exception {
        assertThat(estimate("{\"prompt\":\"" + "x".repeat(400) + "\"}")).isEqualTo(100);
        assertThat(estimate("{\"prompt\":\"" + "x".repeat(401) + "\"}")).isEqualTo(101);
        assertThat(estimate("{\"prompt\":[\"abcd\",\"abcdefgh\"]}")).isEqualTo(3);
    }

    @Test
    void tokenIdPromptsCountExactly() throws Exception {
        assertThat(estimate("{\"prompt\":[1,2,3,4,5]}")).isEqualTo(5);
        assertThat(estimate("{\"prompt\":[[1,2],[3,4,5]]}")).isEqualTo(5);
    }

    @Test
    void chatMessagesCountTheirTextAndATemplateAllowance() throws Exception {
        String body = "{\"messages\":[{\"role\":\"system\",\"content\":\"" + "s".repeat(40) + "\"},"
                + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"" + "u".repeat(80) + "\"},"
                + "{\"type\":\"image_url\",\"image_url\":{\"url\":\"http://x\"}}]}]}";
        assertThat(estimate(body)).isEqualTo(2 * PromptSize.TOKENS_PER_MESSAGE + 10 + 20);
    }

    @Test
    void anyRequestCostsAtLeastOneToken() throws Exception {
        assertThat(estimate("{\"model\":\"m\"}")).isEqualTo(1);
        assertThat(estimate("{\"prompt\":\"\"}")).isEqualTo(1);
        assertThat(estimate("{\"prompt\":7,\"messages\":\"not a list\"}")).isEqualTo(1);
    }
}
