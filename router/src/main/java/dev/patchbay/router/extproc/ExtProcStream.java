package dev.patchbay.router.extproc;

import com.google.protobuf.ByteString;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pool.RequestInFlight;
import dev.patchbay.router.proxy.ProxyHandler;
import dev.patchbay.router.proxy.RouterMetrics;
import dev.patchbay.router.route.OpenAiError;
import dev.patchbay.router.route.RouteDecider;
import dev.patchbay.router.route.RouteDecision;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.StreamedBodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.TrailersResponse;
import io.envoyproxy.envoy.type.v3.HttpStatus;
import io.envoyproxy.envoy.type.v3.StatusCode;
import io.grpc.stub.StreamObserver;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One HTTP request as Envoy's external-processing filter shows it: headers, then the body, then the response.
 * The Endpoint Picker Protocol: read the body's {@code model}, pick an endpoint, and answer with the header
 * {@code x-gateway-destination-endpoint} and the same value in dynamic metadata under {@code envoy.lb}; refuse
 * with an immediate response (400, 429, 503) in OpenAI's error shape.
 *
 * <p>Two request body modes. {@code BUFFERED}: Envoy waits for the headers answer before it sends the whole body,
 * so headers are let through unchanged and the destination rides on the body answer. {@code FULL_DUPLEX_STREAMED}
 * (the gateway's reference mode, told by {@code protocol_config}): body chunks come without waiting, the headers
 * answer is held until the whole body is in, and the body is sent back as a streamed replacement in chunks of at
 * most {@link #MAX_CHUNK_BYTES}. In both, request trailers also end the body; answers go headers, body, trailers.
 * The response is watched only to take the prompt out of the prefill tally at its first byte. gRPC calls one
 * stream's {@code onNext}, {@code onError} and {@code onCompleted} one at a time, so the fields need no locking.
 */
final class ExtProcStream implements StreamObserver<ProcessingRequest> {
    static final String LB_NAMESPACE = "envoy.lb";
    static final String SUBSET_NAMESPACE = "envoy.lb.subset_hint";
    static final String SUBSET_KEY = "x-gateway-destination-endpoint-subset";
    /** Larger bodies are refused (413): the router must hold a whole body to read its model. */
    static final int MAX_BODY_BYTES = RouteDecider.MAX_BODY_BYTES;
    /** Streamed body chunks sent back stay under Envoy's 64 KiB advice, as the gateway's picker does. */
    static final int MAX_CHUNK_BYTES = 62_000;

    private final StreamObserver<ProcessingResponse> out;
    private final RouteDecider decider;
    private final RouterMetrics metrics;
    private final Map<String, String> headers = new HashMap<>();
    private ByteString body = ByteString.EMPTY;
    /** The request body mode from {@code protocol_config}, or null when Envoy did not say (older Envoys). */
    private BodySendMode requestBodyMode;
    private boolean fullDuplexRequest;
    private boolean fullDuplexResponse;
    private boolean decided;
    private Predicate<Endpoint> eligible = RouteDecider.ANY_ENDPOINT;
    private long arrivedNanos;
    private RequestInFlight inFlight;
    private boolean done;

    ExtProcStream(StreamObserver<ProcessingResponse> out, RouteDecider decider, RouterMetrics metrics) {
        this.out = out;
        this.decider = decider;
        this.metrics = metrics;
    }

    @Override
    public void onNext(ProcessingRequest request) {
        if (done) {
            return; // refused already: Envoy has the immediate response and ends the stream
        }
        if (request.hasProtocolConfig()) {
            requestBodyMode = request.getProtocolConfig().getRequestBodyMode();
            fullDuplexRequest = requestBodyMode == BodySendMode.FULL_DUPLEX_STREAMED;
            fullDuplexResponse = request.getProtocolConfig().getResponseBodyMode() == BodySendMode.FULL_DUPLEX_STREAMED;
        }
        switch (request.getRequestCase()) {
            case REQUEST_HEADERS -> onRequestHeaders(request);
            case REQUEST_BODY -> onRequestBody(request.getRequestBody());
            case REQUEST_TRAILERS -> onRequestTrailers();
            case RESPONSE_HEADERS -> onResponseHeaders(request.getResponseHeaders());
            case RESPONSE_BODY -> onResponseBody(request.getResponseBody());
            case RESPONSE_TRAILERS -> out.onNext(ProcessingResponse.newBuilder()
                    .setResponseTrailers(TrailersResponse.getDefaultInstance()).build());
            case REQUEST_NOT_SET -> { } // nothing asked, nothing to answer
        }
    }

    private void onRequestHeaders(ProcessingRequest request) {
        arrivedNanos = System.nanoTime();
        HttpHeaders http = request.getRequestHeaders();
        for (HeaderValue h : http.getHeaders().getHeadersList()) {
            headers.put(h.getKey().toLowerCase(Locale.ROOT), value(h));
        }
        eligible = subset(request);
        if (http.getEndOfStream()) {
            // No body (the model list): any endpoint will do.
            decided = true;
            answer(decider.decideWithoutModel(eligible), true, false);
        } else if (!fullDuplexRequest) {
            out.onNext(ProcessingResponse.newBuilder().setRequestHeaders(HeadersResponse.getDefaultInstance()).build());
        }
    }

    private void onRequestBody(HttpBody chunk) {
        if (decided) {
            return; // a repeated last chunk (Envoy sends one on some large bodies): the decision stands
        }
        if (body.size() + chunk.getBody().size() > MAX_BODY_BYTES) {
            refuse(OpenAiError.tooLarge(MAX_BODY_BYTES));
            return;
        }
        body = body.concat(chunk.getBody());
        if (chunk.getEndOfStream()) {
            decideOnBody(false);
        } else if (!fullDuplexRequest && requestBodyMode != BodySendMode.BUFFERED) {
            // STREAMED or BUFFERED_PARTIAL (or an Envoy that does not say): each chunk would need its answer before
            // the model is known. A BUFFERED body that does not end the stream is followed by trailers.
            refuse(new OpenAiError(500, "configure the ext_proc filter with request_body_mode BUFFERED or "
                    + "FULL_DUPLEX_STREAMED", "server_error", null, "unsupported_body_mode"));
        }
    }

    /** Trailers end a body that did not say it ended; they are answered after the headers and the body. */
    private void onRequestTrailers() {
        if (!decided) {
            decideOnBody(true);
        }
        if (!done) {
            out.onNext(ProcessingResponse.newBuilder().setRequestTrailers(TrailersResponse.getDefaultInstance()).build());
        }
    }

    private void decideOnBody(boolean trailersFollow) {
        decided = true;
        answer(decider.decide(body.toByteArray(), name -> Optional.ofNullable(headers.get(name)), eligible), false,
                trailersFollow);
    }

    /** Sends the decision: an immediate refusal, or the destination on the headers (no body) or on the body. */
    private void answer(RouteDecision decision, boolean noBody, boolean trailersFollow) {
        metrics.pickTook(System.nanoTime() - arrivedNanos);
        if (decision.refused()) {
            refuse(decision.error());
            return;
        }
        EndpointState target = decision.ranked().getFirst();
        String destination = target.endpoint().address();
        metrics.picked(target, decision);
        inFlight = decider.sent(decision, target);

        HeaderMutation.Builder mutation = HeaderMutation.newBuilder().addSetHeaders(header(
                ProxyHandler.DESTINATION_HEADER, destination));
        ByteString forwarded = decision.body() == null ? body : ByteString.copyFrom(decision.body());
        if (decision.rewritten() && !fullDuplexRequest) {
            // (In full-duplex mode Envoy drops Content-Length itself and sends the body chunked.)
            mutation.addSetHeaders(header("content-length", Integer.toString(forwarded.size())));
        }
        CommonResponse.Builder common = CommonResponse.newBuilder()
                .setHeaderMutation(mutation)
                .setClearRouteCache(true); // the route may depend on the header just set
        ProcessingResponse.Builder response = ProcessingResponse.newBuilder().setDynamicMetadata(lbMetadata(destination));
        if (noBody || fullDuplexRequest) {
            out.onNext(response.setRequestHeaders(HeadersResponse.newBuilder().setResponse(common)).build());
            if (!noBody) {
                streamBack(forwarded, !trailersFollow);
            }
        } else {
            if (decision.rewritten()) {
                common.setBodyMutation(BodyMutation.newBuilder().setBody(forwarded));
            }
            out.onNext(response.setRequestBody(BodyResponse.newBuilder().setResponse(common)).build());
        }
    }

    /** The body Envoy streamed to us goes on as replacement chunks (rewritten or not), the last one ending it. */
    private void streamBack(ByteString forwarded, boolean endOfStream) {
        int offset = 0;
        do {
            int end = Math.min(forwarded.size(), offset + MAX_CHUNK_BYTES);
            out.onNext(ProcessingResponse.newBuilder().setRequestBody(BodyResponse.newBuilder().setResponse(
                    CommonResponse.newBuilder().setBodyMutation(BodyMutation.newBuilder().setStreamedResponse(
                            StreamedBodyResponse.newBuilder().setBody(forwarded.substring(offset, end))
                                    .setEndOfStream(endOfStream && end == forwarded.size()))))).build());
            offset = end;
        } while (offset < forwarded.size());
    }

    private void onResponseHeaders(HttpHeaders http) {
        answering();
        for (HeaderValue h : http.getHeaders().getHeadersList()) {
            if (h.getKey().equals(":status")) {
                try {
                    metrics.responded(Integer.parseInt(value(h).trim()));
                } catch (NumberFormatException ignored) {
                    // not a status Envoy would send; nothing to count
                }
            }
        }
        out.onNext(ProcessingResponse.newBuilder().setResponseHeaders(HeadersResponse.getDefaultInstance()).build());
    }

    private void onResponseBody(HttpBody chunk) {
        answering();
        if (chunk.getEndOfStream()) {
            finished();
            if (arrivedNanos > 0) {
                metrics.requestTook(System.nanoTime() - arrivedNanos);
            }
        }
        BodyResponse.Builder reply = BodyResponse.newBuilder();
        if (fullDuplexResponse) {
            // In full-duplex mode every chunk Envoy sent is held until it comes back.
            reply.setResponse(CommonResponse.newBuilder().setBodyMutation(BodyMutation.newBuilder().setStreamedResponse(
                    StreamedBodyResponse.newBuilder().setBody(chunk.getBody()).setEndOfStream(chunk.getEndOfStream()))));
        }
        out.onNext(ProcessingResponse.newBuilder().setResponseBody(reply).build());
    }

    private void refuse(OpenAiError error) {
        done = true;
        metrics.responded(error.status());
        StatusCode code = StatusCode.forNumber(error.status());
        out.onNext(ProcessingResponse.newBuilder().setImmediateResponse(ImmediateResponse.newBuilder()
                .setStatus(HttpStatus.newBuilder().setCode(code == null ? StatusCode.InternalServerError : code))
                .setHeaders(HeaderMutation.newBuilder().addSetHeaders(header("content-type", "application/json")))
                .setBody(ByteString.copyFrom(error.body()))
                .setDetails(error.code() == null ? "" : error.code())).build());
        out.onCompleted();
    }

    /** The answer has begun: the prefill is done, the request runs. */
    private void answering() {
        if (inFlight != null) {
            inFlight.answering();
        }
    }

    /** The answer ended, or never will: the request is nowhere any more. */
    private void finished() {
        if (inFlight != null) {
            inFlight.finished();
        }
    }

    @Override
    public void onError(Throwable t) {
        finished(); // Envoy dropped the stream: the request is gone
    }

    @Override
    public void onCompleted() {
        finished();
        if (!done) {
            done = true;
            out.onCompleted();
        }
    }

    private static String value(HeaderValue h) {
        return h.getRawValue().isEmpty() ? h.getValue() : h.getRawValue().toString(StandardCharsets.UTF_8);
    }

    static HeaderValueOption header(String name, String value) {
        return HeaderValueOption.newBuilder().setHeader(HeaderValue.newBuilder().setKey(name)
                .setRawValue(ByteString.copyFromUtf8(value))).build();
    }

    /** {@code {"envoy.lb": {"x-gateway-destination-endpoint": destination}}}: the same value as the header. */
    static Struct lbMetadata(String destination) {
        return Struct.newBuilder().putFields(LB_NAMESPACE, Value.newBuilder().setStructValue(Struct.newBuilder()
                .putFields(ProxyHandler.DESTINATION_HEADER, Value.newBuilder().setStringValue(destination).build()))
                .build()).build();
    }

    /** The subset hint's endpoints, when the data plane sent one: only those may be picked. */
    private static Predicate<Endpoint> subset(ProcessingRequest request) {
        Struct hint = request.getMetadataContext().getFilterMetadataMap().get(SUBSET_NAMESPACE);
        if (hint == null || !hint.containsFields(SUBSET_KEY)) {
            return RouteDecider.ANY_ENDPOINT;
        }
        Value listed = hint.getFieldsOrThrow(SUBSET_KEY);
        Set<String> allowed = new HashSet<>();
        if (listed.hasListValue()) {
            ListValue list = listed.getListValue();
            for (Value v : list.getValuesList()) {
                allowed.add(v.getStringValue().trim());
            }
        } else {
            for (String part : listed.getStringValue().split(",")) {
                allowed.add(part.trim());
            }
        }
        return endpoint -> allowed.contains(endpoint.address());
    }
}
