package dev.patchbay.router.proxy;

import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.pool.EndpointPool;
import dev.patchbay.router.pool.Send;
import dev.patchbay.router.route.OpenAiError;
import dev.patchbay.router.route.RequestLifecycle;
import dev.patchbay.router.route.RouteDecision;
import io.helidon.http.Header;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Forwards OpenAI requests to the endpoint {@link RequestLifecycle} picked, streaming the answer
 * through as it comes; retries the next-best endpoint once when the connection fails before
 * any answer (refused, or reset or closed before the status line). Answers the requests it
 * cannot forward (a body over the limit or cut short, an unknown path) with OpenAI errors.
 */
public final class ProxyHandler {
    public static final String DESTINATION_HEADER = "x-gateway-destination-endpoint";
    /** Tries per request: the best endpoint, then the next best if the first failed before answering. */
    private static final int MAX_ATTEMPTS = 2;

    private static final Set<String> HOP_BY_HOP = Set.of(
            "connection",
            "keep-alive",
            "proxy-connection",
            "proxy-authenticate",
            "proxy-authorization",
            "te",
            "trailer",
            "transfer-encoding",
            "upgrade",
            "host",
            "content-length",
            "expect",
            "http2-settings");

    private static final System.Logger LOG = System.getLogger(ProxyHandler.class.getName());

    private final EndpointPool pool;
    private final RequestLifecycle lifecycle;
    private final HttpClient client;
    private final RouterMetrics metrics;

    public ProxyHandler(EndpointPool pool, RequestLifecycle lifecycle, HttpClient client, RouterMetrics metrics) {
        this.pool = pool;
        this.lifecycle = lifecycle;
        this.client = client;
        this.metrics = metrics;
    }

    /** POST /v1/completions and /v1/chat/completions: the body's {@code model} decides. */
    public void handleModelRequest(ServerRequest req, ServerResponse res) throws IOException {
        long arrived = System.nanoTime();
        RequestBody.Result body = RequestBody.read(req, RequestLifecycle.MAX_BODY_BYTES);
        if (body.error() != null) {
            respond(res, body.error(), body.closeConnection());
            return;
        }
        RouteDecision decision =
                lifecycle.decide(body.bytes(), name -> req.headers().first(HeaderNames.create(name)));
        forward(req, res, decision, arrived);
    }

    /** Any other method and path: 404 in OpenAI's shape, once the body (if any) is read. */
    public void handleUnknownPath(ServerRequest req, ServerResponse res) {
        RequestBody.Result body = RequestBody.read(req, RequestLifecycle.MAX_BODY_BYTES);
        respond(
                res,
                OpenAiError.unknownUrl(
                        req.prologue().method().text(), req.path().rawPath()),
                body.closeConnection());
    }

    /** GET /v1/models: any ready endpoint can answer. */
    public void handleModels(ServerRequest req, ServerResponse res) throws IOException {
        long arrived = System.nanoTime();
        forward(req, res, lifecycle.decideWithoutModel(), arrived);
    }

    private void forward(ServerRequest req, ServerResponse res, RouteDecision decision, long arrived)
            throws IOException {
        metrics.pickTook(System.nanoTime() - arrived);
        // A server refuses a request that asked for a slot when none is free there (another router's request took
        // it): the request waits in the router again, and goes where a slot frees first.
        while (!decision.refused() && !send(req, res, decision, arrived)) {
            decision = lifecycle.awaitSlotAgain(decision);
        }
        if (decision.refused()) {
            respond(res, decision.error());
        }
    }

    /** Sends the request as decided and relays the answer; false when the server refused it for want of a slot. */
    private boolean send(ServerRequest req, ServerResponse res, RouteDecision decision, long arrived)
            throws IOException {
        List<EndpointState> ranked = decision.ranked();
        int attempts = Math.min(MAX_ATTEMPTS, ranked.size());
        boolean everyConnectFailed = true;
        String lastFailure = null;
        Send send = decision.send();
        for (int attempt = 0; attempt < attempts; attempt++) {
            EndpointState target = ranked.get(attempt);
            send = send.movedTo(target.endpoint()); // the same send on the first attempt
            try {
                HttpResponse<InputStream> upstream;
                try {
                    upstream = client.send(
                            upstreamRequest(req, target, decision), HttpResponse.BodyHandlers.ofInputStream());
                } catch (IOException e) {
                    if (!failedBeforeAnswer(e)) {
                        respond(
                                res,
                                OpenAiError.badGateway(
                                        "model server " + target.endpoint() + " failed: " + e.getMessage()));
                        return true;
                    }
                    // No answer came, so the request can go elsewhere (the client has seen nothing yet).
                    boolean connectFailed = e instanceof ConnectException || e instanceof HttpConnectTimeoutException;
                    if (connectFailed) {
                        pool.markUnreachable(target.endpoint(), "connection failed: " + e);
                    }
                    everyConnectFailed &= connectFailed;
                    lastFailure = "model server " + target.endpoint() + " failed before answering: " + e;
                    LOG.log(
                            System.Logger.Level.INFO,
                            lastFailure
                                    + (attempt + 1 < attempts
                                            ? "; trying "
                                                    + ranked.get(attempt + 1).endpoint()
                                            : ""));
                    continue;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return true;
                }
                if (slotRefused(decision, upstream)) {
                    upstream.body().close();
                    return false;
                }
                metrics.picked(target, decision);
                relay(upstream, res, target, send);
                metrics.responded(upstream.statusCode());
                metrics.requestTook(System.nanoTime() - arrived);
                return true;
            } finally {
                send.finished();
            }
        }
        respond(
                res,
                everyConnectFailed
                        ? OpenAiError.noEndpoint("no model server could be reached")
                        : OpenAiError.badGateway(lastFailure));
        return true;
    }

    private static boolean slotRefused(RouteDecision decision, HttpResponse<InputStream> upstream) {
        return decision.requiresSlot()
                && upstream.statusCode() == 503
                && upstream.headers()
                        .firstValue(RequestLifecycle.SLOT_REFUSED_HEADER)
                        .map(v -> v.equalsIgnoreCase("true"))
                        .orElse(false);
    }

    /**
     * The exchange failed at the connection before any answer: a refused or timed-out connect, or a connection reset or
     * closed before the status line came. {@code send} returns once the status line and headers are in, so whatever
     * it throws came before them, but for a malformed answer (the server did answer) and a time-out waiting for one
     * (the server has the request and is slow).
     */
    private static boolean failedBeforeAnswer(IOException e) {
        return e instanceof HttpConnectTimeoutException
                || !(e instanceof HttpTimeoutException || e instanceof ProtocolException);
    }

    private HttpRequest upstreamRequest(ServerRequest req, EndpointState target, RouteDecision decision) {
        byte[] body = decision.body();
        String query = req.query().rawValue();
        URI uri = URI.create("http://" + target.endpoint().address()
                + req.path().rawPath() + (query == null || query.isEmpty() ? "" : "?" + query));
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri);
        for (Header header : req.headers()) {
            String name = header.name().toLowerCase(Locale.ROOT);
            if (!HOP_BY_HOP.contains(name)) {
                for (String value : header.allValues()) {
                    try {
                        builder.header(header.name(), value);
                    } catch (IllegalArgumentException notForwardable) {
                        // a header the HTTP client refuses to send (e.g. a restricted one): drop it
                    }
                }
            }
        }
        if (decision.requiresSlot()) {
            builder.setHeader(RequestLifecycle.REQUIRE_SLOT_HEADER, "true");
        }
        if (body == null) {
            builder.GET();
        } else {
            builder.POST(HttpRequest.BodyPublishers.ofByteArray(body));
        }
        return builder.build();
    }

    /** Copies status, headers and body, flushing every chunk so that SSE events are not held back. */
    private void relay(HttpResponse<InputStream> upstream, ServerResponse res, EndpointState target, Send send)
            throws IOException {
        res.status(Status.create(upstream.statusCode()));
        upstream.headers().map().forEach((name, values) -> {
            String lower = name.toLowerCase(Locale.ROOT);
            if (!HOP_BY_HOP.contains(lower) && !lower.equals(DESTINATION_HEADER) && !lower.startsWith(":")) {
                res.header(name, values.toArray(String[]::new));
            }
        });
        upstream.headers().firstValueAsLong("content-length").ifPresent(res::contentLength);
        res.header(DESTINATION_HEADER, target.endpoint().address());
        try (InputStream in = upstream.body();
                OutputStream out = res.outputStream()) {
            byte[] buffer = new byte[16 * 1024];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                if (n > 0) {
                    send.answering(); // the first byte of a stream comes with the first token
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
        } catch (IOException e) {
            // The client went away or the server broke off mid-answer; the status is already sent.
            LOG.log(System.Logger.Level.DEBUG, "relay from " + target.endpoint() + " ended early: " + e);
        }
    }

    private void respond(ServerResponse res, OpenAiError error) {
        respond(res, error, false);
    }

    /** With {@code closeConnection}, the connection closes after the answer (a request body not read to its end). */
    private void respond(ServerResponse res, OpenAiError error, boolean closeConnection) {
        metrics.responded(error.status());
        res.status(Status.create(error.status()));
        res.header("Content-Type", "application/json");
        if (closeConnection) {
            res.header(HeaderValues.CONNECTION_CLOSE);
        }
        res.send(error.body());
    }
}
