package dev.patchbay.router.extproc;

import dev.patchbay.testkit.Await;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.patchbay.router.Router;
import dev.patchbay.router.RouterOptions;
import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pool.EndpointSource;
import dev.patchbay.router.proxy.FakeModelServer;
import dev.patchbay.router.proxy.ProxyHandler;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpTrailers;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProtocolConfiguration;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The router's Envoy face, driven over real gRPC on loopback with Envoy's own protos, as Envoy would. */
class ExtProcTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private Router router;
    private ManagedChannel channel;

    @AfterEach
    void close() throws Exception {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (router != null) {
            router.stop();
        }
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    private FakeModelServer server(String name, String page) throws Exception {
        FakeModelServer s = new FakeModelServer(name, page);
        closing.add(s);
        return s;
    }

    private void start(RouterConfig config, FakeModelServer... servers) throws Exception {
        List<Endpoint> endpoints = Arrays.stream(servers).map(s -> Endpoint.parse(s.address())).toList();
        router = new Router(new RouterOptions("127.0.0.1", 0, EndpointSource.of(endpoints), config,
                Duration.ofMillis(25), Duration.ofMillis(500)).withExtProcPort(0)).start();
        Await.until("every endpoint ready", () -> router.pool().readyStates().size() == servers.length);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", router.extProcPort()).usePlaintext().build();
    }

    /** One ext_proc stream, as Envoy opens one per HTTP request. */
    private final class Stream {
        final BlockingQueue<ProcessingResponse> answers = new LinkedBlockingQueue<>();
        final CountDownLatch ended = new CountDownLatch(1);
        final StreamObserver<ProcessingRequest> requests;

        Stream() {
            requests = ExternalProcessorGrpc.newStub(channel).process(new StreamObserver<>() {
                @Override
                public void onNext(ProcessingResponse value) {
                    answers.add(value);
                }

                @Override
                public void onError(Throwable t) {
                    ended.countDown();
                }

                @Override
                public void onCompleted() {
                    ended.countDown();
                }
            });
        }

        ProcessingResponse send(ProcessingRequest request) throws InterruptedException {
            requests.onNext(request);
            return next();
        }

        ProcessingResponse next() throws InterruptedException {
            ProcessingResponse answer = answers.poll(5, TimeUnit.SECONDS);
            assertThat(answer).as("an answer from the external processor").isNotNull();
            return answer;
        }

        /** Sends a message that must get no answer (yet). */
        void sendUnanswered(ProcessingRequest request) throws InterruptedException {
            requests.onNext(request);
            assertThat(answers.poll(150, TimeUnit.MILLISECONDS)).isNull();
        }
    }

    private static ProcessingRequest headers(String method, String path, boolean endOfStream, BodySendMode mode,
                                             String... extra) {
        HeaderMap.Builder map = HeaderMap.newBuilder()
                .addHeaders(raw(":method", method)).addHeaders(raw(":path", path))
                .addHeaders(raw("content-type", "application/json"));
        for (int i = 0; i < extra.length; i += 2) {
            map.addHeaders(raw(extra[i], extra[i + 1]));
        }
        ProcessingRequest.Builder request = ProcessingRequest.newBuilder()
                .setRequestHeaders(HttpHeaders.newBuilder().setHeaders(map).setEndOfStream(endOfStream));
        if (mode != null) {
            request.setProtocolConfig(ProtocolConfiguration.newBuilder().setRequestBodyMode(mode)
                    .setResponseBodyMode(mode));
        }
        return request.build();
    }

    private static HeaderValue raw(String key, String value) {
        return HeaderValue.newBuilder().setKey(key).setRawValue(ByteString.copyFromUtf8(value)).build();
    }

    private static ProcessingRequest body(String text, boolean endOfStream) {
        return ProcessingRequest.newBuilder().setRequestBody(HttpBody.newBuilder()
                .setBody(ByteString.copyFromUtf8(text)).setEndOfStream(endOfStream)).build();
    }

    private static ProcessingRequest responseHeaders(int status) {
        return ProcessingRequest.newBuilder().setResponseHeaders(HttpHeaders.newBuilder().setHeaders(
                HeaderMap.newBuilder().addHeaders(raw(":status", Integer.toString(status))))).build();
    }

    private static String completion(String model) {
        return "{\"model\":\"" + model + "\",\"prompt\":\"" + "word ".repeat(100) + "\",\"max_tokens\":4}";
    }

    private static String headerSet(List<HeaderValueOption> options, String name) {
        return options.stream().filter(o -> o.getHeader().getKey().equals(name))
                .map(o -> o.getHeader().getRawValue().toStringUtf8()).findFirst().orElse(null);
    }

    private static String lbDestination(ProcessingResponse response) {
        return response.getDynamicMetadata().getFieldsOrThrow(ExtProcStream.LB_NAMESPACE).getStructValue()
                .getFieldsOrThrow(ProxyHandler.DESTINATION_HEADER).getStringValue();
    }

    @Test
    void bufferedBodyGetsTheDestinationWhereTheAdapterIsInASlot() throws Exception {
        FakeModelServer cold = server("cold", FakeModelServer.page(0, 0.1, "other"));
        FakeModelServer warm = server("warm", FakeModelServer.page(0, 0.1, "sql"));
        start(RouterConfig.DEFAULT, cold, warm);
        Stream stream = new Stream();

        ProcessingResponse onHeaders = stream.send(headers("POST", "/v1/completions", false, null));
        assertThat(onHeaders.hasRequestHeaders()).isTrue();
        assertThat(onHeaders.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersCount())
                .as("headers go on unchanged; the destination comes with the body").isZero();

        ProcessingResponse onBody = stream.send(body(completion("sql"), true));
        assertThat(onBody.hasRequestBody()).isTrue();
        var common = onBody.getRequestBody().getResponse();
        assertThat(headerSet(common.getHeaderMutation().getSetHeadersList(), ProxyHandler.DESTINATION_HEADER))
                .isEqualTo(warm.address());
        assertThat(lbDestination(onBody)).as("metadata and header must not differ").isEqualTo(warm.address());
        assertThat(common.getClearRouteCache()).isTrue();
        assertThat(common.hasBodyMutation()).as("an unchanged body is not resent").isFalse();
        assertThat(router.pool().promptTokensInFlight(Endpoint.parse(warm.address())))
                .as("the prompt counts as prefill work until the answer starts").isGreaterThan(100);

        assertThat(stream.send(responseHeaders(200)).hasResponseHeaders()).isTrue();
        assertThat(router.pool().promptTokensInFlight(Endpoint.parse(warm.address()))).isZero();
        stream.requests.onCompleted();
        assertThat(stream.ended.await(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void fullDuplexHoldsTheHeadersUntilTheWholeBodyAndSendsTheRewrittenBodyBack() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        RouterConfig rewrite = RouterConfig.parse("""
                {"rewrites": [{"model": "public", "targets": [{"model": "sql", "weight": 1}]}]}""");
        start(rewrite, a);
        Stream stream = new Stream();
        String json = completion("public");

        stream.sendUnanswered(headers("POST", "/v1/completions", false, BodySendMode.FULL_DUPLEX_STREAMED));
        stream.sendUnanswered(body(json.substring(0, 20), false));
        stream.requests.onNext(body(json.substring(20), true));

        ProcessingResponse onHeaders = stream.next();
        assertThat(onHeaders.hasRequestHeaders()).isTrue();
        List<HeaderValueOption> set = onHeaders.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList();
        assertThat(headerSet(set, ProxyHandler.DESTINATION_HEADER)).isEqualTo(a.address());
        assertThat(lbDestination(onHeaders)).isEqualTo(a.address());

        ProcessingResponse onBody = stream.next();
        var streamed = onBody.getRequestBody().getResponse().getBodyMutation().getStreamedResponse();
        assertThat(streamed.getEndOfStream()).isTrue();
        assertThat(JSON.readTree(streamed.getBody().toByteArray()).get("model").asText()).isEqualTo("sql");
        assertThat(headerSet(set, "content-length")).as("Envoy drops it in full-duplex mode").isNull();

        // Full-duplex response bodies are held by Envoy until they come back: each chunk is echoed.
        assertThat(stream.send(responseHeaders(200)).hasResponseHeaders()).isTrue();
        ProcessingResponse echoed = stream.send(ProcessingRequest.newBuilder().setResponseBody(HttpBody.newBuilder()
                .setBody(ByteString.copyFromUtf8("data: {}\n\n")).setEndOfStream(true)).build());
        assertThat(echoed.getResponseBody().getResponse().getBodyMutation().getStreamedResponse().getBody()
                .toStringUtf8()).isEqualTo("data: {}\n\n");
    }

    @Test
    void aBufferedRewriteReplacesTheBodyAndItsLength() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        start(RouterConfig.parse("""
                {"rewrites": [{"model": "public", "targets": [{"model": "sql", "weight": 1}]}]}"""), a);
        Stream stream = new Stream();
        stream.send(headers("POST", "/v1/completions", false, BodySendMode.BUFFERED));
        var common = stream.send(body(completion("public"), true)).getRequestBody().getResponse();
        ByteString replaced = common.getBodyMutation().getBody();
        assertThat(JSON.readTree(replaced.toByteArray()).get("model").asText()).isEqualTo("sql");
        assertThat(headerSet(common.getHeaderMutation().getSetHeadersList(), "content-length"))
                .isEqualTo(Integer.toString(replaced.size()));
        assertThat(headerSet(common.getHeaderMutation().getSetHeadersList(), ProxyHandler.DESTINATION_HEADER))
                .isEqualTo(a.address());
    }

    @Test
    void trailersEndTheBodyAndAreAnsweredLastInBothModes() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        start(RouterConfig.DEFAULT, a);
        ProcessingRequest trailers = ProcessingRequest.newBuilder()
                .setRequestTrailers(HttpTrailers.getDefaultInstance()).build();

        Stream duplex = new Stream();
        duplex.sendUnanswered(headers("POST", "/v1/completions", false, BodySendMode.FULL_DUPLEX_STREAMED));
        duplex.sendUnanswered(body(completion("sql"), false));
        duplex.requests.onNext(trailers);
        assertThat(lbDestination(duplex.next())).isEqualTo(a.address());
        var streamed = duplex.next().getRequestBody().getResponse().getBodyMutation().getStreamedResponse();
        assertThat(streamed.getBody().toStringUtf8()).isEqualTo(completion("sql"));
        assertThat(streamed.getEndOfStream()).as("the trailers end the stream, not the body").isFalse();
        assertThat(duplex.next().hasRequestTrailers()).isTrue();

        Stream buffered = new Stream();
        buffered.send(headers("POST", "/v1/completions", false, BodySendMode.BUFFERED));
        buffered.sendUnanswered(body(completion("sql"), false));
        buffered.requests.onNext(trailers);
        assertThat(lbDestination(buffered.next())).isEqualTo(a.address());
        assertThat(buffered.next().hasRequestTrailers()).isTrue();
    }

    @Test
    void aRepeatedLastChunkIsIgnoredAndLeavesNothingInTheTally() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        start(RouterConfig.DEFAULT, a);
        Stream stream = new Stream();
        stream.sendUnanswered(headers("POST", "/v1/completions", false, BodySendMode.FULL_DUPLEX_STREAMED));
        stream.requests.onNext(body(completion("sql"), true));
        stream.next();
        stream.next();
        stream.sendUnanswered(body(completion("sql"), true));
        stream.send(responseHeaders(200));
        assertThat(router.pool().promptTokensInFlight(Endpoint.parse(a.address()))).isZero();
    }

    @Test
    void aLargeBodyGoesBackInChunksUnderEnvoysLimit() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        start(RouterConfig.DEFAULT, a);
        String big = "{\"model\":\"sql\",\"prompt\":\"" + "x".repeat(200_000) + "\"}";
        Stream stream = new Stream();
        stream.sendUnanswered(headers("POST", "/v1/completions", false, BodySendMode.FULL_DUPLEX_STREAMED));
        stream.requests.onNext(body(big, true));
        stream.next(); // headers
        ByteString back = ByteString.EMPTY;
        int chunks = 0;
        while (true) {
            var chunk = stream.next().getRequestBody().getResponse().getBodyMutation().getStreamedResponse();
            assertThat(chunk.getBody().size()).isLessThanOrEqualTo(ExtProcStream.MAX_CHUNK_BYTES);
            back = back.concat(chunk.getBody());
            chunks++;
            if (chunk.getEndOfStream()) {
                break;
            }
        }
        assertThat(back.toStringUtf8()).isEqualTo(big);
        assertThat(chunks).isEqualTo(4);
    }

    @Test
    void aBufferedBodyOverFourMegabytesIsReadAndOneOverTheLimitIs413() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        start(RouterConfig.DEFAULT, a);
        Stream large = new Stream();
        large.send(headers("POST", "/v1/completions", false, BodySendMode.BUFFERED));
        String fiveMiB = "{\"model\":\"sql\",\"prompt\":\"" + "x".repeat(5 << 20) + "\"}";
        assertThat(lbDestination(large.send(body(fiveMiB, true)))).isEqualTo(a.address());

        Stream tooLarge = new Stream();
        tooLarge.send(headers("POST", "/v1/completions", false, BodySendMode.BUFFERED));
        String overLimit = "{\"model\":\"sql\",\"prompt\":\"" + "x".repeat(ExtProcStream.MAX_BODY_BYTES) + "\"}";
        assertThat(tooLarge.send(body(overLimit, true)).getImmediateResponse().getStatus().getCodeValue()).isEqualTo(413);
    }

    @Test
    void aSheddableRequestIsRefusedWith429WhenEveryServerIsSaturated() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(20, 0.95, "sql"));
        start(RouterConfig.DEFAULT, a);
        Stream stream = new Stream();
        stream.send(headers("POST", "/v1/completions", false, null, "x-patchbay-sheddable", "true"));
        assertThat(stream.send(body(completion("sql"), true)).getImmediateResponse().getStatus().getCodeValue())
                .isEqualTo(429);
        Stream critical = new Stream();
        critical.send(headers("POST", "/v1/completions", false, null));
        assertThat(lbDestination(critical.send(body(completion("sql"), true)))).isEqualTo(a.address());
    }

    @Test
    void aStreamEnvoyDropsGivesItsPromptBack() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        start(RouterConfig.DEFAULT, a);
        Stream stream = new Stream();
        stream.send(headers("POST", "/v1/completions", false, null));
        stream.send(body(completion("sql"), true));
        Endpoint endpoint = Endpoint.parse(a.address());
        assertThat(router.pool().promptTokensInFlight(endpoint)).isPositive();
        stream.requests.onError(new RuntimeException("client gone"));
        Await.until("the cancelled stream's prompt leaves the tally",
                () -> router.pool().promptTokensInFlight(endpoint) == 0);
        Await.until("the cancelled stream leaves the endpoint's queue",
                () -> router.pool().readyStates().getFirst().metrics().waitingRequests() == 0);
    }

    @Test
    void aRequestWithoutBodyIsRoutedOnItsHeaders() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1));
        start(RouterConfig.DEFAULT, a);
        ProcessingResponse answer = new Stream().send(headers("GET", "/v1/models", true, null));
        assertThat(headerSet(answer.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList(),
                ProxyHandler.DESTINATION_HEADER)).isEqualTo(a.address());
        assertThat(lbDestination(answer)).isEqualTo(a.address());
    }

    @Test
    void badRequestsAndAnEmptyPoolGetImmediateOpenAiErrors() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        // With a complete adapter list the router knows "nope" does not exist (without one, the server says 404).
        start(RouterConfig.parse("{\"adapters\": [\"sql\"]}"), a);

        Stream unknown = new Stream();
        unknown.send(headers("POST", "/v1/completions", false, null));
        ProcessingResponse refused = unknown.send(body(completion("nope"), true));
        assertThat(refused.getImmediateResponse().getStatus().getCodeValue()).isEqualTo(400);
        assertThat(JSON.readTree(refused.getImmediateResponse().getBody().toByteArray()).at("/error/code").asText())
                .isEqualTo("model_not_found");
        assertThat(unknown.ended.await(5, TimeUnit.SECONDS)).as("the stream ends after an immediate response").isTrue();

        Stream notJson = new Stream();
        notJson.send(headers("POST", "/v1/completions", false, null));
        assertThat(notJson.send(body("{not json", true)).getImmediateResponse().getStatus().getCodeValue()).isEqualTo(400);

        Stream streamedMode = new Stream();
        streamedMode.send(headers("POST", "/v1/completions", false, null));
        assertThat(streamedMode.send(body("{\"model\":", false)).getImmediateResponse().getStatus().getCodeValue())
                .as("chunks that each want an answer (STREAMED mode) are refused, not left hanging").isEqualTo(500);

        a.kill();
        Await.until("the dead server goes stale", () -> router.pool().readyStates().isEmpty());
        Stream empty = new Stream();
        empty.send(headers("POST", "/v1/completions", false, null));
        ProcessingResponse unavailable = empty.send(body(completion("sql"), true));
        assertThat(unavailable.getImmediateResponse().getStatus().getCodeValue()).isEqualTo(503);

        // The server kept serving through all of that.
        assertThat(new Stream().send(headers("POST", "/v1/completions", false, null)).hasRequestHeaders()).isTrue();
    }

    @Test
    void theSubsetHintLimitsTheCandidates() throws Exception {
        FakeModelServer warm = server("warm", FakeModelServer.page(0, 0.1, "sql"));
        FakeModelServer cold = server("cold", FakeModelServer.page(0, 0.1, "other"));
        start(RouterConfig.DEFAULT, warm, cold);

        Stream limited = new Stream();
        limited.send(withSubset(headers("POST", "/v1/completions", false, null), cold.address()));
        ProcessingResponse onBody = limited.send(body(completion("sql"), true));
        assertThat(lbDestination(onBody)).as("only the hinted endpoint may be used").isEqualTo(cold.address());

        Stream commaSeparated = new Stream();
        Struct hint = Struct.newBuilder().putFields(ExtProcStream.SUBSET_KEY,
                Value.newBuilder().setStringValue("10.9.9.9:8000, " + cold.address()).build()).build();
        commaSeparated.send(headers("POST", "/v1/completions", false, null).toBuilder().setMetadataContext(
                Metadata.newBuilder().putFilterMetadata(ExtProcStream.SUBSET_NAMESPACE, hint)).build());
        assertThat(lbDestination(commaSeparated.send(body(completion("sql"), true)))).isEqualTo(cold.address());

        Stream nowhere = new Stream();
        nowhere.send(withSubset(headers("POST", "/v1/completions", false, null), "10.9.9.9:8000"));
        assertThat(nowhere.send(body(completion("sql"), true)).getImmediateResponse().getStatus().getCodeValue())
                .isEqualTo(503);
    }

    private static ProcessingRequest withSubset(ProcessingRequest request, String... addresses) {
        ListValue.Builder list = ListValue.newBuilder();
        for (String a : addresses) {
            list.addValues(Value.newBuilder().setStringValue(a));
        }
        Struct hint = Struct.newBuilder().putFields(ExtProcStream.SUBSET_KEY, Value.newBuilder().setListValue(list).build())
                .build();
        return request.toBuilder().setMetadataContext(Metadata.newBuilder()
                .putFilterMetadata(ExtProcStream.SUBSET_NAMESPACE, hint)).build();
    }

    @Test
    void concurrentStreamsAreAllAnsweredAndLeaveNoPromptInTheTally() throws Exception {
        FakeModelServer a = server("a", FakeModelServer.page(0, 0.1, "sql"));
        FakeModelServer b = server("b", FakeModelServer.page(0, 0.1, "sql"));
        start(RouterConfig.DEFAULT, a, b);
        ExecutorService clients = Executors.newFixedThreadPool(8);
        List<Future<String>> destinations = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            boolean fullDuplex = i % 2 == 0;
            Callable<String> one = () -> {
                Stream stream = new Stream();
                BodySendMode mode = fullDuplex ? BodySendMode.FULL_DUPLEX_STREAMED : null;
                if (!fullDuplex) {
                    stream.send(headers("POST", "/v1/completions", false, mode));
                } else {
                    stream.requests.onNext(headers("POST", "/v1/completions", false, mode));
                }
                stream.requests.onNext(body(completion("sql"), true));
                ProcessingResponse decided = stream.next();
                if (fullDuplex) {
                    stream.next(); // the body
                }
                stream.send(responseHeaders(200));
                stream.requests.onCompleted();
                return lbDestination(decided);
            };
            destinations.add(clients.submit(one));
        }
        List<String> seen = new ArrayList<>();
        for (Future<String> f : destinations) {
            seen.add(f.get(30, TimeUnit.SECONDS));
        }
        clients.shutdown();
        assertThat(seen).hasSize(200).containsOnly(a.address(), b.address());
        assertThat(seen).as("both holders get requests").contains(a.address(), b.address());
        assertThat(router.pool().promptTokensInFlight(Endpoint.parse(a.address()))
                + router.pool().promptTokensInFlight(Endpoint.parse(b.address()))).isZero();
    }

    @Test
    void healthServicesServeWhileRunning() throws Exception {
        start(RouterConfig.DEFAULT, server("a", FakeModelServer.page(0, 0.1)));
        var health = HealthGrpc.newBlockingStub(channel);
        for (String service : List.of("liveness", "readiness", ExternalProcessorGrpc.SERVICE_NAME)) {
            assertThat(health.check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus())
                    .as(service).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
        }
    }
}
