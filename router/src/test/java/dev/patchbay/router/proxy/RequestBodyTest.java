package dev.patchbay.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.route.RequestLifecycle;
import dev.patchbay.testkit.RawHttp;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** How the router's HTTP face takes request bodies it cannot forward, sent as exact bytes. */
class RequestBodyTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private FakeModelServer server;
    private RouterHarness router;

    @BeforeEach
    void start() throws Exception {
        server = new FakeModelServer("s", FakeModelServer.page(0, 0.1));
        router = RouterHarness.over(RouterConfig.DEFAULT, server);
        router.awaitReady(1);
    }

    @AfterEach
    void stop() {
        router.close();
        server.close();
    }

    /** A completions body of exactly {@code size} bytes. */
    private static byte[] completionOfSize(int size) {
        byte[] head = "{\"model\":\"base\",\"prompt\":\"".getBytes(StandardCharsets.US_ASCII);
        byte[] tail = "\"}".getBytes(StandardCharsets.US_ASCII);
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'x');
        System.arraycopy(head, 0, body, 0, head.length);
        System.arraycopy(tail, 0, body, size - tail.length, tail.length);
        return body;
    }

    private static byte[] request(String head, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + 256);
        out.writeBytes(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        + "Connection: close\r\n" + head + "\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(body);
        return out.toByteArray();
    }

    private static byte[] withLength(byte[] body) {
        return request("Content-Length: " + body.length + "\r\n", body);
    }

    /** {@code body} in chunks of at most {@code chunkSize} bytes, then the last (empty) chunk. */
    private static byte[] chunked(byte[] body, int chunkSize) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + 1024);
        for (int from = 0; from < body.length; from += chunkSize) {
            int n = Math.min(chunkSize, body.length - from);
            out.writeBytes((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body, from, n);
            out.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return request("Transfer-Encoding: chunked\r\n", out.toByteArray());
    }

    private static JsonNode openAiError(RawHttp.Response response) throws Exception {
        assertThat(response.header("content-type")).startsWith("application/json");
        JsonNode error = JSON.readTree(response.body()).path("error");
        assertThat(error.path("message").asText()).isNotBlank();
        assertThat(error.has("type") && error.has("param") && error.has("code"))
                .as(response.body())
                .isTrue();
        return error;
    }

    private void assertStillServes() throws Exception {
        HttpResponse<String> ok = router.complete("base");
        assertThat(ok.statusCode()).isEqualTo(200);
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {RequestLifecycle.MAX_BODY_BYTES + 1, 17_000_000, 20 * 1024 * 1024})
    void aBodyOverTheLimitGets413ByContentLength(int size) throws Exception {
        RawHttp.Response response = RawHttp.exchange(router.port(), withLength(completionOfSize(size)), false);
        assertThat(response.status()).as(response.body()).isEqualTo(413);
        assertThat(openAiError(response).path("code").asText()).isEqualTo("body_too_large");
        assertThat(server.completions.get()).as("nothing forwarded").isZero();
        assertStillServes();
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {RequestLifecycle.MAX_BODY_BYTES + 1, 20 * 1024 * 1024})
    void aBodyOverTheLimitGets413Chunked(int size) throws Exception {
        RawHttp.Response response = RawHttp.exchange(router.port(), chunked(completionOfSize(size), 1 << 20), false);
        assertThat(response.status()).as(response.body()).isEqualTo(413);
        assertThat(openAiError(response).path("code").asText()).isEqualTo("body_too_large");
        assertThat(server.completions.get()).isZero();
        assertStillServes();
    }

    @Test
    void aChunkedBodyWithinTheLimitIsForwarded() throws Exception {
        RawHttp.Response response = RawHttp.exchange(router.port(), chunked(completionOfSize(100_000), 4096), false);
        assertThat(response.status()).as(response.body()).isEqualTo(200);
        assertThat(JSON.readTree(response.body()).path("served_by").asText()).isEqualTo("s");
        assertThat(server.models).containsExactly("base");
    }

    @Test
    void aBodyShorterThanItsContentLengthGets400() throws Exception {
        byte[] body = completionOfSize(1_000);
        byte[] truncated = request("Content-Length: " + body.length + "\r\n", Arrays.copyOf(body, 400));
        RawHttp.Response response = RawHttp.exchange(router.port(), truncated, true);
        assertThat(response.status()).as(response.body()).isEqualTo(400);
        JsonNode error = openAiError(response);
        assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(error.path("code").asText()).isEqualTo("incomplete_body");
        assertThat(server.completions.get()).isZero();
        assertStillServes();
    }

    @Test
    void aMalformedChunkGets400() throws Exception {
        byte[] bad = request(
                "Transfer-Encoding: chunked\r\n",
                "zz\r\n{\"model\":\"base\"}\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        RawHttp.Response response = RawHttp.exchange(router.port(), bad, true);
        assertThat(response.status()).as(response.body()).isEqualTo(400);
        assertThat(openAiError(response).path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(server.completions.get()).isZero();
    }

    @Test
    void aContentLengthThatIsNotANumberGets400InOpenAiShape() throws Exception {
        RawHttp.Response response = RawHttp.exchange(
                router.port(), request("Content-Length: many\r\n", "{}".getBytes(StandardCharsets.US_ASCII)), true);
        assertThat(response.status()).as(response.body()).isEqualTo(400);
        assertThat(openAiError(response).path("type").asText()).isEqualTo("invalid_request_error");
    }

    @Test
    void unknownPathsGet404InOpenAiShape() throws Exception {
        HttpResponse<String> embeddings = router.post("/v1/embeddings", "{\"model\":\"base\",\"input\":\"hi\"}");
        HttpResponse<String> nothing = router.get("/v1/nothing");
        HttpResponse<String> wrongMethod = router.get("/v1/completions");
        for (HttpResponse<String> response : List.of(embeddings, nothing, wrongMethod)) {
            assertThat(response.statusCode()).as(response.uri().toString()).isEqualTo(404);
            assertThat(response.headers().firstValue("content-type"))
                    .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
            JsonNode error = JSON.readTree(response.body()).path("error");
            assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
            assertThat(error.path("code").asText()).isEqualTo("unknown_url");
        }
        assertThat(JSON.readTree(embeddings.body()).at("/error/message").asText())
                .isEqualTo("Invalid URL (POST /v1/embeddings)");
        assertThat(JSON.readTree(wrongMethod.body()).at("/error/message").asText())
                .isEqualTo("Invalid URL (GET /v1/completions)");
        assertThat(server.completions.get()).isZero();
    }
}
