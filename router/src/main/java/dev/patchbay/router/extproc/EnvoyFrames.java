package dev.patchbay.router.extproc;

import com.google.protobuf.ByteString;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpTrailers;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProtocolConfiguration;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * ext_proc request messages built with Envoy's protos as Envoy frames them: the first message of a stream carries
 * the request headers (raw values, pseudo-headers first) and the {@code protocol_config} with the body modes; a body
 * comes in one message or in chunks, {@code end_of_stream} on the last; the response headers carry the served
 * endpoint in {@code metadata_context} under {@code envoy.lb}. Envoy attaches the metadata it forwards (the subset hint)
 * to every message of a stream, body chunks and trailers included. The router's tests and the conformance kit speak to
 * pickers with them.
 *
 * @param requestBodyMode  null for an Envoy that sends no {@code protocol_config} (older than the full-duplex mode)
 * @param responseBodyMode the response body mode told in {@code protocol_config}
 */
public record EnvoyFrames(BodySendMode requestBodyMode, BodySendMode responseBodyMode) {
    /** The gateway's reference setup, response bodies included. */
    public static final EnvoyFrames FULL_DUPLEX =
            new EnvoyFrames(BodySendMode.FULL_DUPLEX_STREAMED, BodySendMode.FULL_DUPLEX_STREAMED);

    public static final EnvoyFrames BUFFERED = new EnvoyFrames(BodySendMode.BUFFERED, BodySendMode.NONE);
    public static final EnvoyFrames NO_PROTOCOL_CONFIG = new EnvoyFrames(null, null);
    public static final List<EnvoyFrames> BOTH_MODES = List.of(FULL_DUPLEX, BUFFERED);

    public boolean fullDuplex() {
        return requestBodyMode == BodySendMode.FULL_DUPLEX_STREAMED;
    }

    /** The headers of a POST to {@code /v1/completions} with {@code body} to follow; {@code extra}: name, value, ... */
    public ProcessingRequest post(byte[] body, String... extra) {
        return headers("POST", "/v1/completions", false, body.length, extra);
    }

    /** The headers of a GET with no body: they end the request. */
    public ProcessingRequest get(String path) {
        return headers("GET", path, true, -1);
    }

    private ProcessingRequest headers(
            String method, String path, boolean endOfStream, int contentLength, String... extra) {
        HeaderMap.Builder map = HeaderMap.newBuilder()
                .addHeaders(raw(":authority", "gateway.example:8080"))
                .addHeaders(raw(":path", path))
                .addHeaders(raw(":method", method))
                .addHeaders(raw(":scheme", "http"))
                .addHeaders(raw("user-agent", "curl/8.5.0"))
                .addHeaders(raw("x-forwarded-proto", "http"))
                .addHeaders(raw("x-request-id", "5b3c1c0e-8d1e-4a5e-9f5e-0d2f1b7c9a11"));
        if (contentLength >= 0) {
            map.addHeaders(raw("content-type", "application/json"))
                    .addHeaders(raw("content-length", Integer.toString(contentLength)));
        }
        for (int i = 0; i < extra.length; i += 2) {
            map.addHeaders(raw(extra[i], extra[i + 1]));
        }
        ProcessingRequest.Builder request = ProcessingRequest.newBuilder()
                .setRequestHeaders(HttpHeaders.newBuilder().setHeaders(map).setEndOfStream(endOfStream));
        if (requestBodyMode != null) {
            request.setProtocolConfig(ProtocolConfiguration.newBuilder()
                    .setRequestBodyMode(requestBodyMode)
                    .setResponseBodyMode(responseBodyMode));
        }
        return request.build();
    }

    public static HeaderValue raw(String key, String value) {
        return HeaderValue.newBuilder()
                .setKey(key)
                .setRawValue(ByteString.copyFromUtf8(value))
                .build();
    }

    /** The whole body in one message, as in {@code BUFFERED} mode or a body that fits one read. */
    public static ProcessingRequest whole(byte[] body) {
        return body(body, 0, body.length, true);
    }

    /** The body cut at {@code cuts} (byte offsets, ascending), one message per piece, the last ending the body. */
    public static List<ProcessingRequest> chunks(byte[] body, int... cuts) {
        List<ProcessingRequest> pieces = new ArrayList<>();
        int from = 0;
        for (int cut : cuts) {
            pieces.add(body(body, from, cut, false));
            from = cut;
        }
        pieces.add(body(body, from, body.length, true));
        return pieces;
    }

    /** One body message of {@code body[from, to)}. */
    public static ProcessingRequest body(byte[] body, int from, int to, boolean endOfStream) {
        return ProcessingRequest.newBuilder()
                .setRequestBody(HttpBody.newBuilder()
                        .setBody(ByteString.copyFrom(Arrays.copyOfRange(body, from, to)))
                        .setEndOfStream(endOfStream))
                .build();
    }

    public static ProcessingRequest trailers() {
        return ProcessingRequest.newBuilder()
                .setRequestTrailers(HttpTrailers.getDefaultInstance())
                .build();
    }

    /** Response headers without a served-endpoint report (a data plane that does not send one). */
    public static ProcessingRequest responseHeaders(int status) {
        return ProcessingRequest.newBuilder()
                .setResponseHeaders(HttpHeaders.newBuilder()
                        .setHeaders(HeaderMap.newBuilder()
                                .addHeaders(raw(":status", Integer.toString(status)))
                                .addHeaders(raw("content-type", "application/json"))))
                .build();
    }

    /** Response headers with {@code served} reported in {@code metadata_context}, as the proposal has it. */
    public static ProcessingRequest responseHeaders(int status, String served) {
        return servedBy(responseHeaders(status), served);
    }

    public static ProcessingRequest responseBody(String text, boolean endOfStream) {
        return ProcessingRequest.newBuilder()
                .setResponseBody(HttpBody.newBuilder()
                        .setBody(ByteString.copyFromUtf8(text))
                        .setEndOfStream(endOfStream))
                .build();
    }

    /** {@code message} with {@code {"envoy.lb": {"x-gateway-destination-endpoint-served": served}}}. */
    public static ProcessingRequest servedBy(ProcessingRequest message, String served) {
        Struct lb = Struct.newBuilder()
                .putFields(
                        PickerProtocol.SERVED_KEY,
                        Value.newBuilder().setStringValue(served).build())
                .build();
        return message.toBuilder()
                .setMetadataContext(Metadata.newBuilder().putFilterMetadata(PickerProtocol.LB_NAMESPACE, lb))
                .build();
    }

    /** {@code message} with the subset hint as the proposal shapes it: a list of {@code ip:port} strings. */
    public static ProcessingRequest withSubset(ProcessingRequest message, String... addresses) {
        ListValue.Builder list = ListValue.newBuilder();
        for (String address : addresses) {
            list.addValues(Value.newBuilder().setStringValue(address));
        }
        return withHint(message, Value.newBuilder().setListValue(list).build());
    }

    /** {@code message} with the subset hint as one comma-separated string. */
    public static ProcessingRequest withSubsetString(ProcessingRequest message, String addresses) {
        return withHint(message, Value.newBuilder().setStringValue(addresses).build());
    }

    private static ProcessingRequest withHint(ProcessingRequest message, Value hint) {
        Struct entry =
                Struct.newBuilder().putFields(PickerProtocol.SUBSET_KEY, hint).build();
        return message.toBuilder()
                .setMetadataContext(Metadata.newBuilder().putFilterMetadata(PickerProtocol.SUBSET_NAMESPACE, entry))
                .build();
    }

    /** A completions body for {@code model} with a prompt of about 100 tokens. */
    public static byte[] completion(String model) {
        return ("{\"model\":\"" + model + "\",\"prompt\":\"" + "word ".repeat(100) + "\",\"max_tokens\":4}")
                .getBytes(StandardCharsets.UTF_8);
    }
}
