package dev.patchbay.server.http;

/** A request that ends with an OpenAI-shaped error: {@code {"error":{"message","type","param","code"}}}. */
public final class ApiException extends RuntimeException {
    private final int status;
    private final String param;
    private final boolean closeConnection;

    public ApiException(int status, String message) {
        this(status, message, null);
    }

    public ApiException(int status, String message, String param) {
        this(status, message, param, false);
    }

    /** {@code closeConnection}: the connection's bytes can no longer be trusted to start a next request. */
    public ApiException(int status, String message, String param, boolean closeConnection) {
        super(message);
        this.status = status;
        this.param = param;
        this.closeConnection = closeConnection;
    }

    public int status() {
        return status;
    }

    public String param() {
        return param;
    }

    public boolean closeConnection() {
        return closeConnection;
    }

    /** The error type vLLM reports for each status. */
    public static String typeFor(int status) {
        return switch (status) {
            case 400 -> "BadRequestError";
            case 401 -> "AuthenticationError";
            case 404 -> "NotFoundError";
            case 405 -> "MethodNotAllowedError";
            case 413 -> "RequestEntityTooLargeError";
            case 429 -> "RateLimitError";
            case 503 -> "ServiceUnavailableError";
            default -> "InternalServerError";
        };
    }

    public static ApiException badRequest(String message) {
        return new ApiException(400, message);
    }

    public static ApiException badRequest(String message, String param) {
        return new ApiException(400, message, param);
    }
}
