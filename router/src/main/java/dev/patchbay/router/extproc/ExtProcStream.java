package dev.patchbay.router.extproc;

import com.google.protobuf.ByteString;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.proxy.RouterMetrics;
import dev.patchbay.router.route.OpenAiError;
import dev.patchbay.router.route.RequestLifecycle;
import dev.patchbay.router.route.RouteDecision;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One HTTP request as Envoy's external-processing filter shows it: headers, then the body, then the response. It
 * reads the body's {@code model}, picks, and answers with the ranked destinations ({@link PickerProtocol}), or
 * refuses with an immediate response (400, 413, 429, 503) in OpenAI's error shape.
 *
 * <p>Two request body modes. {@code BUFFERED}: Envoy waits for the headers answer before it sends the whole body,
 * so the headers go on unchanged and the destination rides on the body answer. {@code FULL_DUPLEX_STREAMED} (the
 * gateway's reference mode, told by {@code protocol_config}): chunks come without waiting, the headers answer is
 * held until the whole body is in, and the body goes back as a streamed replacement. In both, request trailers
 * also end the body, and answers go headers, body, trailers. gRPC calls one stream's {@code onNext},
 * {@code onError} and {@code onCompleted} one at a time, so the fields need no locking.
 */
final class ExtProcStream implements StreamObserver<ProcessingRequest> {
    private final StreamObserver<ProcessingResponse> out;
    private final RequestLifecycle lifecycle;
    private final RouterMetrics metrics;
    /** How many endpoints an answer names after the first choice. */
    private final int fallbacks;

    private final Map<String, String> headers = new HashMap<>();
    private ByteString body = ByteString.EMPTY;
    /** The request body mode from {@code protocol_config}, or null when Envoy did not say (older Envoys). */
    private BodySendMode requestBodyMode;

    private boolean fullDuplexRequest;
    private boolean fullDuplexResponse;
    private Predicate<Endpoint> eligible = RequestLifecycle.ANY_ENDPOINT;
    private boolean decided;
    private long arrivedNanos;
    /** The request sent on, once decided and not refused. */
    private SentRequest sent;

    private boolean responseBegun;
    private boolean done;

    ExtProcStream(
            StreamObserver<ProcessingResponse> out, RequestLifecycle lifecycle, RouterMetrics metrics, int fallbacks) {
        this.out = out;
        this.lifecycle = lifecycle;
        this.metrics = metrics;
        this.fallbacks = fallbacks;
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
        if (!decided && eligible == RequestLifecycle.ANY_ENDPOINT) {
            // The hint may come with any request message before the decision; the first one that has it counts.
            Optional<Set<Endpoint>> subset = PickerProtocol.subset(request.getMetadataContext());
            if (subset.isPresent()) {
                eligible = subset.get()::contains;
            }
        }
        switch (request.getRequestCase()) {
            case REQUEST_HEADERS -> onRequestHeaders(request.getRequestHeaders());
            case REQUEST_BODY -> onRequestBody(request.getRequestBody());
            case REQUEST_TRAILERS -> onRequestTrailers();
            case RESPONSE_HEADERS -> {
                responseBegins(request);
                onResponseHeaders(request.getResponseHeaders());
            }
            case RESPONSE_BODY -> {
                responseBegins(request);
                onResponseBody(request.getResponseBody());
            }
            case RESPONSE_TRAILERS -> {
                responseBegins(request);
                out.onNext(Answers.responseTrailers());
            }
            case REQUEST_NOT_SET -> {} // nothing asked, nothing to answer
        }
    }

    private void onRequestHeaders(HttpHeaders http) {
        arrivedNanos = System.nanoTime();
        for (HeaderValue h : http.getHeaders().getHeadersList()) {
            headers.put(h.getKey().toLowerCase(Locale.ROOT), value(h));
        }
        if (http.getEndOfStream()) {
            // No body (the model list): any endpoint will do.
            decided = true;
            answer(lifecycle.decideWithoutModel(eligible), true, false);
        } else if (!fullDuplexRequest) {
            out.onNext(Answers.requestHeadersUnchanged());
        }
    }

    private void onRequestBody(HttpBody chunk) {
        if (decided) {
            return; // a repeated last chunk (Envoy sends one on some large bodies): the decision stands
        }
        if (body.size() + chunk.getBody().size() > RequestLifecycle.MAX_BODY_BYTES) {
            refuse(OpenAiError.tooLarge(RequestLifecycle.MAX_BODY_BYTES));
            return;
        }
        body = body.concat(chunk.getBody()); // a rope: chunks are not copied until the body is read
        if (chunk.getEndOfStream()) {
            decideOnBody(false);
        } else if (!fullDuplexRequest && requestBodyMode != BodySendMode.BUFFERED) {
            // STREAMED or BUFFERED_PARTIAL (or an Envoy that does not say): each chunk would need its answer before
            // the model is known. A BUFFERED body that does not end the stream is followed by trailers.
            refuse(new OpenAiError(
                    500,
                    "configure the ext_proc filter with request_body_mode BUFFERED or " + "FULL_DUPLEX_STREAMED",
                    "server_error",
                    null,
                    "unsupported_body_mode"));
        }
    }

    /** Trailers end a body that did not say it ended; they are answered after the headers and the body. */
    private void onRequestTrailers() {
        if (!decided) {
            decideOnBody(true);
        }
        if (!done) {
            out.onNext(Answers.requestTrailers());
        }
    }

    private void decideOnBody(boolean trailersFollow) {
        decided = true;
        answer(
                lifecycle.decide(body.toByteArray(), name -> Optional.ofNullable(headers.get(name)), eligible),
                false,
                trailersFollow);
    }

    /** Sends the decision: an immediate refusal, or the destinations on the headers answer or the body answer. */
    private void answer(RouteDecision decision, boolean noBody, boolean trailersFollow) {
        metrics.pickTook(System.nanoTime() - arrivedNanos);
        if (decision.refused()) {
            refuse(decision.error());
            return;
        }
        List<EndpointState> offered = decision.requiresSlot()
                ? PickerProtocol.offeredForSlot(
                        decision.ranked(), fallbacks, decision.request().model())
                : PickerProtocol.offered(decision.ranked(), fallbacks);
        String destinations = PickerProtocol.destinationValue(offered);
        sent = new SentRequest(lifecycle, metrics, decision, offered);

        HeaderMutation.Builder mutation = HeaderMutation.newBuilder()
                .addSetHeaders(Answers.overwrite(PickerProtocol.DESTINATION_KEY, destinations));
        if (decision.requiresSlot() && offered.size() > 1) {
            // Every endpoint but the last may refuse it for want of a slot; Envoy retries a refusal on the next.
            mutation.addSetHeaders(
                    Answers.overwrite(RequestLifecycle.REQUIRE_SLOT_HEADER, Integer.toString(offered.size())));
        } else {
            mutation.addRemoveHeaders(RequestLifecycle.REQUIRE_SLOT_HEADER); // only the picker may ask for a slot
        }
        ByteString forwarded = decision.body() == null ? body : ByteString.copyFrom(decision.body());
        if (!noBody && (fullDuplexRequest || decision.rewritten())) {
            // Buffered: a rewritten body with the old length would be rejected. Full duplex: the length the body
            // sent back has, which Envoy cannot know when it forwards the headers (the gateway's picker does this).
            mutation.addSetHeaders(Answers.overwrite("content-length", Integer.toString(forwarded.size())));
        }
        CommonResponse.Builder common = CommonResponse.newBuilder()
                .setHeaderMutation(mutation)
                .setClearRouteCache(true); // the route may depend on the header just set
        ProcessingResponse.Builder response =
                ProcessingResponse.newBuilder().setDynamicMetadata(PickerProtocol.lbMetadata(destinations));
        if (noBody || fullDuplexRequest) {
            out.onNext(response.setRequestHeaders(HeadersResponse.newBuilder().setResponse(common))
                    .build());
            if (!noBody) {
                Answers.streamedRequestBody(forwarded, !trailersFollow).forEach(out::onNext);
            }
        } else {
            if (decision.rewritten()) {
                common.setBodyMutation(BodyMutation.newBuilder().setBody(forwarded));
            }
            out.onNext(response.setRequestBody(BodyResponse.newBuilder().setResponse(common))
                    .build());
        }
    }

    /** The first response message: the prefill is done, and the data plane may say which endpoint served. */
    private void responseBegins(ProcessingRequest request) {
        if (!responseBegun) {
            responseBegun = true;
            if (sent != null) {
                sent.answering(PickerProtocol.served(request.getMetadataContext()));
            }
        }
    }

    private void onResponseHeaders(HttpHeaders http) {
        for (HeaderValue h : http.getHeaders().getHeadersList()) {
            if (h.getKey().equals(":status")) {
                try {
                    metrics.responded(Integer.parseInt(value(h).trim()));
                } catch (NumberFormatException ignored) {
                    // not a status Envoy would send; nothing to count
                }
            }
        }
        out.onNext(Answers.responseHeadersUnchanged());
    }

    private void onResponseBody(HttpBody chunk) {
        if (chunk.getEndOfStream()) {
            finished();
            if (arrivedNanos > 0) {
                metrics.requestTook(System.nanoTime() - arrivedNanos);
            }
        }
        out.onNext(Answers.responseBody(chunk, fullDuplexResponse));
    }

    private void refuse(OpenAiError error) {
        done = true;
        metrics.responded(error.status());
        out.onNext(Answers.immediate(error));
        out.onCompleted();
    }

    /** The answer ended, or never will: the request is nowhere any more. */
    private void finished() {
        if (sent != null) {
            sent.finished();
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
}
