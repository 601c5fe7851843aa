package dev.patchbay.router.route;

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
        return new OpenAiError(429, "every model server is saturated and the request is sheddable",
                "rate_limit_error", null, "pool_saturated");
    }

    public static OpenAiError badGateway(String message) {
        return new OpenAiError(502, message, "bad_gateway", null, "upstream_failed");
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
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
