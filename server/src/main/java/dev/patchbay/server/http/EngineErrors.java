package dev.patchbay.server.http;

import dev.patchbay.engine.RequestRejectedException;
import dev.patchbay.engine.adapter.AdapterException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one mapping from engine refusals and adapter failures to HTTP statuses, and the one time an adapter load is
 * waited for. The completions handlers, the adapter resolver, the admin endpoints and start-up all go through it,
 * so the same failure gets the same status wherever it happens.
 */
public final class EngineErrors {
    /** How long a caller waits for an adapter to become resident before giving up on it. */
    public static final Duration ADAPTER_LOAD_TIMEOUT = Duration.ofSeconds(120);

    private EngineErrors() {}

    /** NOT_FOUND is 404; an adapter that breaks a rule, or a name clash, is a bad request. */
    public static int status(AdapterException.Kind kind) {
        return switch (kind) {
            case NOT_FOUND -> 404;
            case INVALID, CONFLICT -> 400;
        };
    }

    public static int status(RequestRejectedException.Reason reason) {
        return switch (reason) {
            case UNKNOWN_ADAPTER -> 404;
            case INVALID -> 400;
            case QUEUE_FULL -> 429;
            case SHUTTING_DOWN, NO_SLOT -> 503;
        };
    }

    public static ApiException of(AdapterException e) {
        return new ApiException(status(e.kind()), e.getMessage());
    }

    public static ApiException of(RequestRejectedException e) {
        return new ApiException(status(e.reason()), e.getMessage());
    }

    /** The load failed after it was accepted (unreadable weights, for one): the server's fault, 500. */
    public static ApiException loadFailed(String adapter, Throwable cause) {
        return new ApiException(500, "Loading LoRA adapter '" + adapter + "' failed: " + cause.getMessage());
    }

    public static ApiException loadTimedOut(String adapter) {
        return new ApiException(
                500,
                "Loading LoRA adapter '" + adapter + "' timed out after " + ADAPTER_LOAD_TIMEOUT.toSeconds() + " s");
    }

    public static ApiException shuttingDown() {
        return new ApiException(503, "The server is shutting down");
    }

    /**
     * Waits up to {@link #ADAPTER_LOAD_TIMEOUT} for an accepted load to make the adapter resident; a failure,
     * a time-out or an interrupt becomes the API error for it.
     */
    public static void awaitLoad(String adapter, CompletableFuture<?> load) {
        try {
            load.get(ADAPTER_LOAD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw loadFailed(adapter, e.getCause());
        } catch (TimeoutException e) {
            throw loadTimedOut(adapter);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw shuttingDown();
        }
    }
}
