package dev.patchbay.router.route;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** An error answered by the router itself, in OpenAI's shape {"error":{message,type,param,code}}. */
public record OpenAiError(int status, String message, String type, String param, String code) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static OpenAiError badRequest(String message, String param, String code) {
        return new OpenAiError(400, message, "invalid_request_error", param, code);
    }

    public static OpenAiError noEndpoint(String message) {
        return new OpenAiError(503, message, "service_unavailable", null, "no_ready_endpoint");
    }

    public static OpenAiError shed() {
        return new OpenAiError(
                429,
                "every model server is saturated and the request is sheddable",
                "rate_limit_error",
                null,
                "pool_saturated");
    }

    public static OpenAiError badGateway(String message) {
        return new OpenAiError(502, message, "bad_gateway", null, "upstream_failed");
    }

    public static OpenAiError tooLarge(long limitBytes) {
        return new OpenAiError(
                413,
                "the request body is larger than " + limitBytes + " bytes",
                "invalid_request_error",
                null,
                "body_too_large");
    }

    /** A body that ended before its declared length, or whose chunked framing is broken. */
    public static OpenAiError incompleteBody(String message) {
        return badRequest(message, null, "incomplete_body");
    }

    /** A path (or method) the router does not serve; OpenAI's own wording for one. */
    public static OpenAiError unknownUrl(String method, String path) {
        return new OpenAiError(
                404, "Invalid URL (" + method + " " + path + ")", "invalid_request_error", null, "unknown_url");
    }

    /**
     * An error the HTTP server raised before any handler ran (a request it cannot parse, say), with its status and
     * message: a client error is {@code invalid_request_error}, a server error {@code server_error}.
     */
    public static OpenAiError ofStatus(int status, String message) {
        return new OpenAiError(status, message, status < 500 ? "invalid_request_error" : "server_error", null, null);
    }

    public byte[] body() {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode error = root.putObject("error");
        error.put("message", message);
        error.put("type", type);
        error.put("param", param);
        error.put("code", code);
        try {
            return JSON.writeValueAsBytes(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
