package dev.patchbay.router.extproc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.patchbay.testkit.Await;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.StreamedBodyResponse;
import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** One ext_proc stream, as Envoy opens one per HTTP request: sends messages and takes the answers in order. */
final class EnvoyStream {
    private final BlockingQueue<ProcessingResponse> answers = new LinkedBlockingQueue<>();
    private final CountDownLatch ended = new CountDownLatch(1);
    private final StreamObserver<ProcessingRequest> requests;

    EnvoyStream(Channel channel) {
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

    void send(ProcessingRequest... messages) {
        send(List.of(messages));
    }

    void send(List<ProcessingRequest> messages) {
        for (ProcessingRequest message : messages) {
            requests.onNext(message);
        }
    }

    /** The next answer, in the order the processor sent them. */
    ProcessingResponse next() throws InterruptedException {
        ProcessingResponse answer = answers.poll(Await.DEFAULT_DEADLINE.toSeconds(), TimeUnit.SECONDS);
        assertThat(answer).as("an answer from the external processor").isNotNull();
        return answer;
    }

    /** Sends one message and takes the next answer. */
    ProcessingResponse exchange(ProcessingRequest message) throws InterruptedException {
        send(message);
        return next();
    }

    /** The streamed request body sent back, chunk by chunk up to the one that ends it. */
    ByteString streamedBody() throws InterruptedException {
        ByteString body = ByteString.EMPTY;
        while (true) {
            ProcessingResponse answer = next();
            assertThat(answer.hasRequestBody()).as("a request body answer").isTrue();
            StreamedBodyResponse chunk =
                    answer.getRequestBody().getResponse().getBodyMutation().getStreamedResponse();
            assertThat(chunk.getBody().size()).isLessThanOrEqualTo(Answers.MAX_CHUNK_BYTES);
            body = body.concat(chunk.getBody());
            if (chunk.getEndOfStream()) {
                return body;
            }
        }
    }

    /** Envoy is done with the request: the stream's half-close. */
    void complete() {
        requests.onCompleted();
    }

    /** Envoy drops the stream (the client went away). */
    void cancel() {
        requests.onError(new RuntimeException("client gone"));
    }

    /** Waits for the processor to end the stream, and returns what it sent that was not taken yet. */
    List<ProcessingResponse> awaitEnd() throws InterruptedException {
        assertThat(ended.await(Await.DEFAULT_DEADLINE.toSeconds(), TimeUnit.SECONDS))
                .as("the stream ends")
                .isTrue();
        List<ProcessingResponse> rest = new ArrayList<>();
        answers.drainTo(rest);
        return rest;
    }
}
