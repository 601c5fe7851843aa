package dev.patchbay.router.extproc;

import static dev.patchbay.router.extproc.Answered.destination;
import static dev.patchbay.router.extproc.Answered.header;
import static dev.patchbay.router.extproc.EnvoyFrames.BUFFERED;
import static dev.patchbay.router.extproc.EnvoyFrames.FULL_DUPLEX;
import static dev.patchbay.router.extproc.EnvoyFrames.NO_PROTOCOL_CONFIG;
import static dev.patchbay.router.extproc.EnvoyFrames.chunks;
import static dev.patchbay.router.extproc.EnvoyFrames.completion;
import static dev.patchbay.router.extproc.EnvoyFrames.responseHeaders;
import static dev.patchbay.router.extproc.EnvoyFrames.trailers;
import static dev.patchbay.router.extproc.EnvoyFrames.whole;
import static dev.patchbay.router.proxy.FakeModelServer.page;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.ByteString;
import dev.patchbay.router.proxy.FakeModelServer;
import dev.patchbay.router.route.RequestLifecycle;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.StreamedBodyResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The request body modes as Envoy frames them: {@code FULL_DUPLEX_STREAMED} (headers, then the body in chunks,
 * answered once the whole body is in) and {@code BUFFERED} (the body in one message, after the headers answer).
 */
class ExtProcBodyModesTest {
    /** Characters of two, three and four bytes in UTF-8, for cuts inside them. */
    private static final String PROMPT = "Grüße aus Köln, 日本語のテキスト 🎉 " + "word ".repeat(60);

    private static final String REWRITE_PUBLIC_TO_SQL = """
            {"rewrites": [{"model": "public", "targets": [{"model": "sql", "weight": 1}]}]}""";

    @AutoClose
    private final ExtProcRoute route = new ExtProcRoute();

    private static byte[] bodyFor(String model) {
        return ("{\"model\":\"" + model + "\",\"prompt\":\"" + PROMPT + "\",\"max_tokens\":4}").getBytes(UTF_8);
    }

    /**
     * Byte offsets that cut {@code body} inside the {@code "model"} key, inside the model's name (both JSON strings),
     * and inside a two-, a three- and a four-byte character.
     */
    private static int[] awkwardCuts(byte[] body) {
        String text = new String(body, UTF_8);
        int inKey = bytesBefore(text, text.indexOf("\"model\"") + 3);
        int inName = bytesBefore(text, text.indexOf(":\"") + 3);
        int inTwoBytes = bytesBefore(text, text.indexOf('ü')) + 1;
        int inThreeBytes = bytesBefore(text, text.indexOf('日')) + 1;
        int inFourBytes = bytesBefore(text, text.indexOf("🎉")) + 2;
        for (int cut : new int[] {inTwoBytes, inThreeBytes, inFourBytes}) {
            assertThat(body[cut] & 0xC0)
                    .as("the cut at %d falls inside a character", cut)
                    .isEqualTo(0x80);
        }
        assertThat(new String(body, 0, inName, UTF_8)).endsWith("\"model\":\"" + text.charAt(text.indexOf(":\"") + 2));
        return new int[] {inKey, inName, inTwoBytes, inThreeBytes, inFourBytes};
    }

    private static int bytesBefore(String text, int charIndex) {
        return text.substring(0, charIndex).getBytes(UTF_8).length;
    }

    @Test
    void fullDuplexAnswersOnceTheWholeBodyIsInAndSendsItBackByteForByte() throws Exception {
        route.server("cold", page(0, 0.1, "other"));
        FakeModelServer warm = route.server("warm", page(0, 0.1, "sql"));
        route.start(null);
        byte[] body = bodyFor("sql");
        EnvoyStream stream = route.stream();
        stream.send(FULL_DUPLEX.post(body));
        stream.send(chunks(body, awkwardCuts(body)));

        // The first answer can only be right with the whole body: the model's name is cut across chunks, and the
        // length is the whole body's. Nothing is answered before it (answers come in order).
        ProcessingResponse first = stream.next();
        assertThat(first.hasRequestHeaders())
                .as("the headers are answered first: " + first)
                .isTrue();
        assertThat(destination(first).split(",")[0])
                .as("where sql is in a slot")
                .isEqualTo(warm.address());
        assertThat(header(first, "content-length")).isEqualTo(Integer.toString(body.length));
        assertThat(Answered.common(first).getClearRouteCache()).isTrue();
        assertThat(stream.streamedBody().toByteArray())
                .as("the body goes on unchanged")
                .isEqualTo(body);

        assertThat(stream.exchange(responseHeaders(200)).hasResponseHeaders())
                .as("no other answer came between")
                .isTrue();
        stream.complete();
        assertThat(stream.awaitEnd()).isEmpty();
    }

    @Test
    void aFullDuplexRewriteSendsTheNewBodyBackWithItsLength() throws Exception {
        FakeModelServer sql = route.server("sql", page(0, 0.1, "sql"));
        route.start(REWRITE_PUBLIC_TO_SQL);
        byte[] body = bodyFor("public");
        EnvoyStream stream = route.stream();
        stream.send(FULL_DUPLEX.post(body));
        stream.send(chunks(body, awkwardCuts(body)));

        ProcessingResponse onHeaders = stream.next();
        assertThat(destination(onHeaders)).isEqualTo(sql.address());
        byte[] forwarded = stream.streamedBody().toByteArray();
        JsonNode json = Answered.json(forwarded);
        assertThat(json.get("model").asText()).isEqualTo("sql");
        assertThat(json.get("prompt").asText())
                .as("characters cut across chunks arrive whole")
                .isEqualTo(PROMPT);
        assertThat(json.get("max_tokens").asInt()).isEqualTo(4);
        assertThat(header(onHeaders, "content-length"))
                .isEqualTo(Integer.toString(forwarded.length))
                .isNotEqualTo(Integer.toString(body.length));
    }

    @Test
    void aBufferedBodyComesInOneMessageAndTheDestinationRidesOnTheBodyAnswer() throws Exception {
        route.server("cold", page(0, 0.1, "other"));
        FakeModelServer warm = route.server("warm", page(0, 0.1, "sql"));
        route.start(null);
        byte[] body = bodyFor("sql");
        for (EnvoyFrames envoy : List.of(BUFFERED, NO_PROTOCOL_CONFIG)) { // no protocol_config: an older Envoy
            EnvoyStream stream = route.stream();
            ProcessingResponse onHeaders = stream.exchange(envoy.post(body));
            assertThat(onHeaders.hasRequestHeaders()).isTrue();
            assertThat(onHeaders
                            .getRequestHeaders()
                            .getResponse()
                            .getHeaderMutation()
                            .getSetHeadersCount())
                    .as("the headers go on unchanged; Envoy sends the body once they are answered")
                    .isZero();

            ProcessingResponse onBody = stream.exchange(whole(body));
            assertThat(onBody.hasRequestBody()).isTrue();
            CommonResponse common = onBody.getRequestBody().getResponse();
            assertThat(destination(onBody).split(",")[0]).isEqualTo(warm.address());
            assertThat(common.getClearRouteCache()).isTrue();
            assertThat(common.hasBodyMutation())
                    .as("an unchanged body is not sent back")
                    .isFalse();
            assertThat(header(onBody, "content-length"))
                    .as("the client's length stands")
                    .isNull();
            assertThat(route.promptTokensInFlight(warm))
                    .as("the prompt is prefill work until the answer starts")
                    .isGreaterThan(50);

            assertThat(stream.exchange(responseHeaders(200)).hasResponseHeaders())
                    .isTrue();
            assertThat(route.promptTokensInFlight(warm)).isZero();
            stream.complete();
            assertThat(stream.awaitEnd()).isEmpty();
        }
    }

    @Test
    void aBufferedRewriteReplacesTheBodyAndItsContentLength() throws Exception {
        FakeModelServer sql = route.server("sql", page(0, 0.1, "sql"));
        route.start(REWRITE_PUBLIC_TO_SQL);
        byte[] body = bodyFor("public");
        EnvoyStream stream = route.stream();
        stream.exchange(BUFFERED.post(body));
        ProcessingResponse onBody = stream.exchange(whole(body));
        ByteString replaced =
                onBody.getRequestBody().getResponse().getBodyMutation().getBody();
        JsonNode json = Answered.json(replaced.toByteArray());
        assertThat(json.get("model").asText()).isEqualTo("sql");
        assertThat(json.get("prompt").asText()).isEqualTo(PROMPT);
        assertThat(header(onBody, "content-length")).isEqualTo(Integer.toString(replaced.size()));
        assertThat(destination(onBody)).isEqualTo(sql.address());
    }

    @Test
    void trailersEndTheBodyAndAreAnsweredLastInBothModes() throws Exception {
        FakeModelServer a = route.server("a", page(0, 0.1, "sql"));
        route.start(null);
        byte[] body = completion("sql");

        EnvoyStream duplex = route.stream();
        duplex.send(FULL_DUPLEX.post(body), EnvoyFrames.body(body, 0, body.length, false), trailers());
        assertThat(destination(duplex.next())).isEqualTo(a.address());
        StreamedBodyResponse streamed =
                duplex.next().getRequestBody().getResponse().getBodyMutation().getStreamedResponse();
        assertThat(streamed.getBody().toByteArray()).isEqualTo(body);
        assertThat(streamed.getEndOfStream())
                .as("the trailers end the request, not the body")
                .isFalse();
        assertThat(duplex.next().hasRequestTrailers()).isTrue();

        EnvoyStream buffered = route.stream();
        buffered.exchange(BUFFERED.post(body));
        buffered.send(EnvoyFrames.body(body, 0, body.length, false), trailers());
        assertThat(destination(buffered.next())).isEqualTo(a.address());
        assertThat(buffered.next().hasRequestTrailers()).isTrue();
    }

    @Test
    void aRepeatedLastChunkIsIgnoredAndLeavesNothingInTheTally() throws Exception {
        FakeModelServer a = route.server("a", page(0, 0.1, "sql"));
        route.start(null);
        byte[] body = completion("sql");
        EnvoyStream stream = route.stream();
        stream.send(FULL_DUPLEX.post(body), whole(body));
        stream.next();
        stream.streamedBody();
        stream.send(whole(body)); // Envoy repeats the last chunk of some large bodies
        assertThat(stream.exchange(responseHeaders(200)).hasResponseHeaders())
                .as("the repeat got no answer")
                .isTrue();
        assertThat(route.promptTokensInFlight(a)).isZero();
    }

    @Test
    void aLargeBodyGoesBackInChunksUnderEnvoysLimit() throws Exception {
        route.server("a", page(0, 0.1, "sql"));
        route.start(null);
        byte[] big = ("{\"model\":\"sql\",\"prompt\":\"" + "x".repeat(200_000) + "\"}").getBytes(UTF_8);
        EnvoyStream stream = route.stream();
        stream.send(FULL_DUPLEX.post(big));
        stream.send(chunks(big, 65_536, 131_072)); // Envoy's own reads are 64 KiB or so
        assertThat(stream.next().hasRequestHeaders()).isTrue();
        List<ProcessingResponse> back = new ArrayList<>();
        ByteString joined = ByteString.EMPTY;
        StreamedBodyResponse chunk;
        do {
            ProcessingResponse answer = stream.next();
            back.add(answer);
            chunk = answer.getRequestBody().getResponse().getBodyMutation().getStreamedResponse();
            assertThat(chunk.getBody().size()).isLessThanOrEqualTo(Answers.MAX_CHUNK_BYTES);
            joined = joined.concat(chunk.getBody());
        } while (!chunk.getEndOfStream());
        assertThat(joined.toByteArray()).isEqualTo(big);
        assertThat(back).hasSize((big.length + Answers.MAX_CHUNK_BYTES - 1) / Answers.MAX_CHUNK_BYTES);
    }

    @Test
    void aBufferedBodyOverFourMegabytesIsReadAndOneOverTheLimitIs413() throws Exception {
        FakeModelServer a = route.server("a", page(0, 0.1, "sql"));
        route.start(null);
        byte[] fiveMiB = ("{\"model\":\"sql\",\"prompt\":\"" + "x".repeat(5 << 20) + "\"}").getBytes(UTF_8);
        EnvoyStream large = route.stream();
        large.exchange(BUFFERED.post(fiveMiB));
        assertThat(destination(large.exchange(whole(fiveMiB)))).isEqualTo(a.address());

        byte[] overLimit = ("{\"model\":\"sql\",\"prompt\":\"" + "x".repeat(RequestLifecycle.MAX_BODY_BYTES) + "\"}")
                .getBytes(UTF_8);
        EnvoyStream tooLarge = route.stream();
        tooLarge.exchange(BUFFERED.post(overLimit));
        assertThat(Answered.status(tooLarge.exchange(whole(overLimit)))).isEqualTo(413);
        assertThat(tooLarge.awaitEnd()).isEmpty();
    }

    @Test
    void modesThatWantAnAnswerPerChunkAreRefusedNotLeftHanging() throws Exception {
        route.server("a", page(0, 0.1, "sql"));
        route.start(null);
        byte[] body = completion("sql");
        List<EnvoyFrames> perChunk = List.of(
                new EnvoyFrames(BodySendMode.STREAMED, BodySendMode.NONE),
                new EnvoyFrames(BodySendMode.BUFFERED_PARTIAL, BodySendMode.NONE),
                NO_PROTOCOL_CONFIG);
        for (EnvoyFrames envoy : perChunk) {
            EnvoyStream stream = route.stream();
            stream.exchange(envoy.post(body));
            ProcessingResponse refused = stream.exchange(EnvoyFrames.body(body, 0, 10, false));
            assertThat(Answered.status(refused))
                    .as(String.valueOf(envoy.requestBodyMode()))
                    .isEqualTo(500);
            assertThat(Answered.error(refused).get("code").asText()).isEqualTo("unsupported_body_mode");
            assertThat(stream.awaitEnd()).isEmpty();
        }
    }

    @Test
    void fullDuplexResponseBodiesAreEchoedChunkByChunk() throws Exception {
        route.server("a", page(0, 0.1, "sql"));
        route.start(null);
        byte[] body = completion("sql");
        EnvoyFrames bufferedStreamingBack = new EnvoyFrames(BodySendMode.BUFFERED, BodySendMode.STREAMED);
        for (EnvoyFrames envoy : List.of(FULL_DUPLEX, bufferedStreamingBack)) {
            EnvoyStream stream = route.stream();
            if (envoy.fullDuplex()) {
                stream.send(envoy.post(body), whole(body));
                stream.next();
                stream.streamedBody();
            } else {
                stream.exchange(envoy.post(body));
                stream.exchange(whole(body));
            }
            stream.exchange(responseHeaders(200));
            for (String event : List.of("data: {\"index\":0}\n\n", "data: [DONE]\n\n")) {
                boolean last = event.contains("DONE");
                ProcessingRequest chunk = EnvoyFrames.responseBody(event, last);
                var answer = stream.exchange(chunk).getResponseBody().getResponse();
                if (envoy.fullDuplex()) {
                    StreamedBodyResponse echoed = answer.getBodyMutation().getStreamedResponse();
                    assertThat(echoed.getBody().toStringUtf8()).isEqualTo(event);
                    assertThat(echoed.getEndOfStream()).isEqualTo(last);
                } else {
                    assertThat(answer.hasBodyMutation())
                            .as("a chunk Envoy does not hold goes on as it is")
                            .isFalse();
                }
            }
        }
    }
}
