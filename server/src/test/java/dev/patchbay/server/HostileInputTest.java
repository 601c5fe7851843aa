package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.ModelTarget;
import dev.patchbay.server.http.ApiException;
import dev.patchbay.testkit.RawHttp;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Requests a careless or hostile client sends: broken bodies, wrongly typed fields, bodies that are not JSON, and
 * unknown paths without the API key. Each gets a 4xx in the OpenAI error shape, and the server keeps serving.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileInputTest {
    @TempDir
    static Path dir;

    ServerHarness h;

    private static final String GOOD = "{\"model\":\"test-model\",\"prompt\":\"hi\",\"max_tokens\":1}";

    @BeforeAll
    void start() throws Exception {
        h = new ServerHarness(dir, List.of("alpha"), "--enable-lora", "--allow-runtime-lora-updating");
    }

    @AfterAll
    void stop() {
        h.close();
    }

    /** A 4xx in the OpenAI error shape whose message says nothing about the server's insides. */
    private static JsonNode assertApiError(int status, int expected, String body) throws Exception {
        assertThat(status).as("status of %s", body).isEqualTo(expected);
        JsonNode error = ServerHarness.JSON.readTree(body).get("error");
        assertThat(error).as("error object in %s", body).isNotNull();
        assertThat(error.get("code").asInt()).isEqualTo(expected);
        assertThat(error.get("type").asText()).isEqualTo(ApiException.typeFor(expected));
        assertThat(error.has("param")).isTrue();
        assertThat(error.get("message").asText()).doesNotContainPattern("Exception|java\\.|helidon");
        return error;
    }

    private void assertStillServing() throws Exception {
        assertThat(h.post("/v1/completions", GOOD).statusCode()).isEqualTo(200);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/v1/completions", "/v1/chat/completions", "/v1/load_lora_adapter"})
    void aBodyShorterThanItsContentLengthIs400(String path) throws Exception {
        String partial = "{\"model\":\"test-model\",";
        RawHttp.Response r = RawHttp.exchange(
                h.server.port(),
                bytes("POST " + path + " HTTP/1.1\r\n"
                        + "Host: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n"
                        + partial),
                true);
        JsonNode error = assertApiError(r.status(), 400, r.body());
        assertThat(error.get("message").asText()).contains("Content-Length");
        assertStillServing();
    }

    /** The client asks to keep the connection; the server closes it, as what follows the bad size is no request. */
    @ParameterizedTest
    @ValueSource(strings = {"zz", "-1", "ffffffffffffffffffff"})
    void aBadChunkSizeIs400AndClosesTheConnection(String chunkSize) throws Exception {
        RawHttp.Response r = RawHttp.exchange(
                h.server.port(),
                bytes("POST /v1/completions HTTP/1.1\r\n"
                        + "Host: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + chunkSize + "\r\n" + GOOD + "\r\n0\r\n\r\n"),
                false);
        JsonNode error = assertApiError(r.status(), 400, r.body());
        assertThat(error.get("message").asText()).contains("chunked");
        assertThat(r.header("Connection")).isEqualToIgnoringCase("close");
        assertStillServing();
    }

    @Test
    void aWellFormedChunkedBodyIsRead() throws Exception {
        RawHttp.Response r = RawHttp.exchange(
                h.server.port(),
                bytes("POST /v1/completions HTTP/1.1\r\n"
                        + "Host: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                        + Integer.toHexString(GOOD.length()) + "\r\n" + GOOD + "\r\n0\r\n\r\n"),
                false);
        assertThat(r.status()).as(r.body()).isEqualTo(200);
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
            /v1/completions      | "model":5                                | model
            /v1/completions      | "stream":"yes"                           | stream
            /v1/completions      | "stream":1                               | stream
            /v1/completions      | "stream_options":"yes"                   | stream_options
            /v1/completions      | "stream":true,"stream_options":{"include_usage":1} | stream_options.include_usage
            /v1/completions      | "max_tokens":"5"                         | max_tokens
            /v1/completions      | "max_tokens":1.5                         | max_tokens
            /v1/completions      | "temperature":"0.5"                      | temperature
            /v1/completions      | "top_p":true                             | top_p
            /v1/completions      | "top_k":"5"                              | top_k
            /v1/completions      | "n":"2"                                  | n
            /v1/completions      | "seed":1.5                               | seed
            /v1/completions      | "seed":"7"                               | seed
            /v1/completions      | "ignore_eos":"true","max_tokens":1       | ignore_eos
            /v1/completions      | "stop":5                                 | stop
            /v1/completions      | "stop":["a",1]                           | stop
            /v1/completions      | "stop_token_ids":"1"                     | stop_token_ids
            /v1/completions      | "stop_token_ids":["1"]                   | stop_token_ids
            /v1/chat/completions | "messages":[{"role":"user","content":"hi"}],"max_completion_tokens":"5" | max_completion_tokens
            /v1/chat/completions | "messages":[{"role":"user","content":"hi"}],"max_tokens":"5","max_completion_tokens":1 | max_tokens
            /v1/chat/completions | "messages":[{"role":"user","content":"hi"}],"add_generation_prompt":"no" | add_generation_prompt
            /v1/chat/completions | "messages":[{"role":"user","content":[{"type":"text","text":5}]}] | messages
            /v1/chat/completions | "messages":[{"role":5,"content":"hi"}]  | messages
            """)
    void aWronglyTypedGenerationFieldIs400NamingIt(String path, String fields, String param) throws Exception {
        String body = "{\"prompt\":\"hi\"," + fields + "}";
        HttpResponse<String> r = h.post(path, body);
        JsonNode error = assertApiError(r.statusCode(), 400, r.body());
        assertThat(error.get("param").asText()).isEqualTo(param);
        assertThat(error.get("message").asText()).contains(param);
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
            /v1/load_lora_adapter   | "lora_name":5,"lora_path":"PATH"               | lora_name
            /v1/load_lora_adapter   | "lora_name":"x5","lora_path":5                 | lora_path
            /v1/load_lora_adapter   | "lora_name":"x5","lora_path":"PATH","pinned":"yes"       | pinned
            /v1/load_lora_adapter   | "lora_name":"x5","lora_path":"PATH","load_inplace":1     | load_inplace
            /v1/unload_lora_adapter | "lora_name":5                                  | lora_name
            /v1/unload_lora_adapter | "lora_name":"alpha","lora_int_id":"1"          | lora_int_id
            """)
    void aWronglyTypedAdminFieldIs400NamingIt(String path, String fields, String param) throws Exception {
        Path adapter = ServerHarness.writeAdapter(dir, "typed");
        HttpResponse<String> r = h.post(path, "{" + fields.replace("PATH", adapter.toString()) + "}");
        JsonNode error = assertApiError(r.statusCode(), 400, r.body());
        assertThat(error.get("param").asText()).isEqualTo(param);
        assertThat(error.get("message").asText()).contains(param);
        assertThat(h.server.engine().resolve("5")).isEqualTo(ModelTarget.UNKNOWN);
        assertThat(h.server.engine().resolve("x5")).isEqualTo(ModelTarget.UNKNOWN);
        assertThat(h.server.engine().resolve("alpha")).isEqualTo(ModelTarget.ADAPTER);
    }

    @Test
    void everyFieldWithItsRightTypeOrNullIsAccepted() throws Exception {
        HttpResponse<String> completion = h.post(
                "/v1/completions",
                "{\"model\":\"test-model\",\"prompt\":\"hi\","
                        + "\"max_tokens\":2,\"temperature\":0,\"top_p\":1,\"top_k\":5,\"n\":1,\"seed\":7,\"ignore_eos\":true,"
                        + "\"stop\":[\"zzz\"],\"stop_token_ids\":[1],\"stream\":false,\"stream_options\":null}");
        assertThat(completion.statusCode()).as(completion.body()).isEqualTo(200);
        HttpResponse<String> nulls = h.post(
                "/v1/completions",
                "{\"model\":null,\"prompt\":\"hi\",\"max_tokens\":null,"
                        + "\"temperature\":null,\"top_p\":null,\"top_k\":null,\"n\":null,\"seed\":null,\"ignore_eos\":null,"
                        + "\"stop\":null,\"stop_token_ids\":null,\"stream\":null}");
        assertThat(nulls.statusCode()).as(nulls.body()).isEqualTo(200);
        HttpResponse<String> chat = h.post(
                "/v1/chat/completions",
                "{\"messages\":[{\"role\":\"user\",\"content\":"
                        + "[{\"type\":\"text\",\"text\":\"hi\"}]}],\"max_completion_tokens\":2,\"add_generation_prompt\":true,"
                        + "\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        assertThat(chat.statusCode()).as(chat.body()).isEqualTo(200);
        assertThat(chat.body()).contains("\"usage\"").endsWith("data: [DONE]\n\n");

        Path adapter = ServerHarness.writeAdapter(dir, "typed-ok");
        HttpResponse<String> load = h.post(
                "/v1/load_lora_adapter",
                "{\"lora_name\":\"typed-ok\",\"lora_path\":\"" + adapter
                        + "\",\"pinned\":false,\"load_inplace\":false}");
        assertThat(load.statusCode()).as(load.body()).isEqualTo(200);
        HttpResponse<String> unload =
                h.post("/v1/unload_lora_adapter", "{\"lora_name\":\"typed-ok\",\"lora_int_id\":null}");
        assertThat(unload.statusCode()).as(unload.body()).isEqualTo(200);
    }

    private HttpResponse<String> postWithContentType(String path, String contentType, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(h.base + path))
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) b.header("Content-Type", contentType);
        return h.http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "text/plain",
                "application/x-www-form-urlencoded",
                "text/json",
                "application/jsonx",
                "application/problem+json"
            })
    void aBodyThatIsNotDeclaredJsonIs400(String contentType) throws Exception {
        for (String path : List.of("/v1/completions", "/v1/load_lora_adapter")) {
            HttpResponse<String> r = postWithContentType(path, contentType, GOOD);
            JsonNode error = assertApiError(r.statusCode(), 400, r.body());
            assertThat(error.get("message").asText()).contains("application/json");
        }
    }

    @Test
    void aBodyWithoutContentTypeIs400() throws Exception {
        HttpResponse<String> r = postWithContentType("/v1/completions", null, GOOD);
        JsonNode error = assertApiError(r.statusCode(), 400, r.body());
        assertThat(error.get("message").asText()).contains("application/json");
    }

    @ParameterizedTest
    @ValueSource(strings = {"application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"})
    void jsonWithOrWithoutParametersIsAccepted(String contentType) throws Exception {
        HttpResponse<String> r = postWithContentType("/v1/completions", contentType, GOOD);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }

    @Test
    void withAnApiKeyEveryV1PathNeedsItAndOnlyThenAnUnknownOneIs404() throws Exception {
        try (ServerHarness keyed = new ServerHarness(dir, List.of(), "--api-key", "s3cret")) {
            for (String path : List.of("/v1/nothing", "/v1/load_lora_adapter", "/v1", "/v1/models/x/y")) {
                HttpResponse<String> get = keyed.get(path);
                assertApiError(get.statusCode(), 401, get.body());
                HttpResponse<String> post = keyed.post(path, GOOD);
                assertApiError(post.statusCode(), 401, post.body());
                HttpResponse<String> wrongKey = keyed.post(path, GOOD, "Authorization", "Bearer wrong");
                assertApiError(wrongKey.statusCode(), 401, wrongKey.body());
            }
            // A known path with a method it does not serve is no different.
            HttpResponse<String> getCompletions = keyed.get("/v1/completions");
            assertApiError(getCompletions.statusCode(), 401, getCompletions.body());

            HttpResponse<String> unknown = keyed.http.send(
                    HttpRequest.newBuilder(URI.create(keyed.base + "/v1/nothing"))
                            .header("Authorization", "Bearer s3cret")
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertApiError(unknown.statusCode(), 404, unknown.body());
            HttpResponse<String> unknownPost = keyed.post("/v1/nothing", GOOD, "Authorization", "Bearer s3cret");
            assertApiError(unknownPost.statusCode(), 404, unknownPost.body());
            // Outside /v1 nothing needs a key.
            assertApiError(
                    keyed.get("/nothing").statusCode(),
                    404,
                    keyed.get("/nothing").body());
            assertThat(keyed.get("/health").statusCode()).isEqualTo(200);
        }
    }
}
