package dev.patchbay.router.extproc;

import dev.patchbay.router.proxy.RouterMetrics;
import dev.patchbay.router.route.RequestLifecycle;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.StreamObserver;

/**
 * {@code envoy.service.ext_proc.v3.ExternalProcessor}: the router's Envoy face. Each HTTP request Envoy proxies is one
 * bidirectional stream, handled by an {@link ExtProcStream}; the picking is the same {@link RequestLifecycle} the HTTP
 * proxy uses.
 */
public final class ExtProcService extends ExternalProcessorGrpc.ExternalProcessorImplBase {
    private final RequestLifecycle lifecycle;
    private final RouterMetrics metrics;
    private final int fallbacks;

    /** {@code fallbacks}: how many endpoints each answer names after the first choice. */
    public ExtProcService(RequestLifecycle lifecycle, RouterMetrics metrics, int fallbacks) {
        this.lifecycle = lifecycle;
        this.metrics = metrics;
        this.fallbacks = fallbacks;
    }

    @Override
    public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> responses) {
        return new ExtProcStream(responses, lifecycle, metrics, fallbacks);
    }
}
