package dev.patchbay.router.extproc;

import com.google.protobuf.ByteString;
import dev.patchbay.router.route.OpenAiError;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption.HeaderAppendAction;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.StreamedBodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.TrailersResponse;
import io.envoyproxy.envoy.type.v3.HttpStatus;
import io.envoyproxy.envoy.type.v3.StatusCode;
import java.util.ArrayList;
import java.util.List;

/** Builds the messages an ext_proc stream answers with. */
final class Answers {
    /** Streamed body chunks sent back stay under Envoy's 64 KiB advice, as the gateway's picker does. */
    static final int MAX_CHUNK_BYTES = 62_000;

    private Answers() {}

    /**
     * Sets {@code name}, replacing any value the client sent: the default action appends, which would let a client
     * add its own destination to the router's.
     */
    static HeaderValueOption overwrite(String name, String value) {
        return HeaderValueOption.newBuilder()
                .setHeader(HeaderValue.newBuilder().setKey(name).setRawValue(ByteString.copyFromUtf8(value)))
                .setAppendAction(HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD)
                .build();
    }

    static ProcessingResponse requestHeadersUnchanged() {
        return ProcessingResponse.newBuilder()
                .setRequestHeaders(HeadersResponse.getDefaultInstance())
                .build();
    }

    static ProcessingResponse requestTrailers() {
        return ProcessingResponse.newBuilder()
                .setRequestTrailers(TrailersResponse.getDefaultInstance())
                .build();
    }

    static ProcessingResponse responseHeadersUnchanged() {
        return ProcessingResponse.newBuilder()
                .setResponseHeaders(HeadersResponse.getDefaultInstance())
                .build();
    }

    static ProcessingResponse responseTrailers() {
        return ProcessingResponse.newBuilder()
                .setResponseTrailers(TrailersResponse.getDefaultInstance())
                .build();
    }

    /** The request body as streamed replacement chunks, the last one ending the body when {@code endOfStream}. */
    static List<ProcessingResponse> streamedRequestBody(ByteString body, boolean endOfStream) {
        List<ProcessingResponse> chunks = new ArrayList<>();
        int offset = 0;
        do {
            int end = Math.min(body.size(), offset + MAX_CHUNK_BYTES);
            chunks.add(ProcessingResponse.newBuilder()
                    .setRequestBody(BodyResponse.newBuilder()
                            .setResponse(streamed(body.substring(offset, end), endOfStream && end == body.size())))
                    .build());
            offset = end;
        } while (offset < body.size());
        return chunks;
    }

    /**
     * The answer to a response body chunk: in full-duplex mode Envoy holds every chunk until it comes back, so it is
     * echoed; otherwise it goes on as it is.
     */
    static ProcessingResponse responseBody(HttpBody chunk, boolean fullDuplex) {
        BodyResponse.Builder reply = BodyResponse.newBuilder();
        if (fullDuplex) {
            reply.setResponse(streamed(chunk.getBody(), chunk.getEndOfStream()));
        }
        return ProcessingResponse.newBuilder().setResponseBody(reply).build();
    }

    /** A refusal the data plane sends the client itself, in OpenAI's error shape. */
    static ProcessingResponse immediate(OpenAiError error) {
        StatusCode code = StatusCode.forNumber(error.status());
        return ProcessingResponse.newBuilder()
                .setImmediateResponse(ImmediateResponse.newBuilder()
                        .setStatus(
                                HttpStatus.newBuilder().setCode(code == null ? StatusCode.InternalServerError : code))
                        .setHeaders(HeaderMutation.newBuilder()
                                .addSetHeaders(overwrite("content-type", "application/json")))
                        .setBody(ByteString.copyFrom(error.body()))
                        .setDetails(error.code() == null ? "" : error.code()))
                .build();
    }

    private static CommonResponse streamed(ByteString body, boolean endOfStream) {
        return CommonResponse.newBuilder()
                .setBodyMutation(BodyMutation.newBuilder()
                        .setStreamedResponse(
                                StreamedBodyResponse.newBuilder().setBody(body).setEndOfStream(endOfStream)))
                .build();
    }
}
