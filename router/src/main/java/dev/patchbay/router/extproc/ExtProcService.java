package dev.patchbay.router.extproc;

import dev.patchbay.router.proxy.RouterMetrics;
import dev.patchbay.router.route.RouteDecider;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.StreamObserver;

/**
 * {@code envoy.service.ext_proc.v3.ExternalProcessor}: the router's Envoy face. Each HTTP request Envoy proxies is one
 * bidirectional stream, handled by an {@link ExtProcStream}; the picking is the same {@link RouteDecider} the HTTP
 * proxy uses.
 */
public final class ExtProcService extends ExternalProcessorGrpc.ExternalProcessorImplBase {
    private final RouteDecider decider;
    private final RouterMetrics metrics;

    public ExtProcService(RouteDecider decider, RouterMetrics metrics) {
        this.decider = decider;
        this.metrics = metrics;
    }

    @Override
    public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> responses) {
        return new ExtProcStream(responses, decider, metrics);
    }
}
