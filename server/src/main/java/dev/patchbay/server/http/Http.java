package dev.patchbay.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** Small helpers for JSON bodies and OpenAI-shaped errors. */
public final class Http {
    public static final ObjectMapper JSON = new ObjectMapper();

    private Http() {}

    /**
     * Reads a JSON object body of at most {@code maxBytes}: 400 when its Content-Type is not application/json, when
     * it is cut short or badly chunked, or when it is not a JSON object; 413 when larger.
     */
    public static ObjectNode readJsonObject(ServerRequest req, long maxBytes) {
        requireJsonContentType(req);
        long declared = req.headers().contentLength().orElse(-1);
        if (declared > maxBytes) throw tooLarge(maxBytes);
        byte[] body;
        try (InputStream in = req.content().inputStream()) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) > 0) {
                if (out.size() + n > maxBytes) throw tooLarge(maxBytes);
                out.write(buf, 0, n);
            }
            body = out.toByteArray();
        } catch (ApiException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            // The web server reports a body that ends early or a chunk size that is not hex as unchecked exceptions
            // of its own; their text names server classes, so the client gets a plain account instead.
            throw unreadableBody(declared);
        }
        JsonNode node;
        try {
            node = JSON.readTree(body);
        } catch (IOException e) {
            throw ApiException.badRequest("The request body is not valid JSON: " + firstLine(e.getMessage()));
        }
        if (node == null || !node.isObject()) throw ApiException.badRequest("The request body must be a JSON object");
        return (ObjectNode) node;
    }

    /** vLLM takes only {@code application/json} (any parameters, such as a charset); a missing type is refused too. */
    private static void requireJsonContentType(ServerRequest req) {
        String given = req.headers().first(HeaderNames.CONTENT_TYPE).orElse(null);
        String mediaType = given == null ? "" : given.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        if (mediaType.equals("application/json")) return;
        String got = given == null ? "no Content-Type" : "Content-Type '" + abbreviate(given.trim(), 80) + "'";
        throw ApiException.badRequest("Unsupported Media Type: only 'application/json' is allowed, got " + got);
    }

    private static ApiException unreadableBody(long declared) {
        return new ApiException(
                400,
                declared >= 0
                        ? "The request body ended before its Content-Length of " + declared + " bytes"
                        : "The request body's chunked encoding is malformed or ends early",
                null,
                true);
    }

    private static String abbreviate(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "...";
    }

    private static ApiException tooLarge(long maxBytes) {
        return new ApiException(413, "The request body is larger than the limit of " + maxBytes + " bytes");
    }

    private static String firstLine(String s) {
        if (s == null) return "";
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    public static byte[] errorBody(int status, String message, String param) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode err = root.putObject("error");
        err.put("message", message);
        err.put("type", ApiException.typeFor(status));
        if (param == null) err.putNull("param");
        else err.put("param", param);
        err.put("code", status);
        return toBytes(root);
    }

    public static void sendError(ServerResponse res, int status, String message, String param) {
        res.status(Status.create(status));
        res.header(HeaderNames.CONTENT_TYPE, "application/json");
        res.send(errorBody(status, message, param));
    }

    public static void sendJson(ServerResponse res, JsonNode body) {
        res.header(HeaderNames.CONTENT_TYPE, "application/json");
        res.send(toBytes(body));
    }

    public static byte[] toBytes(JsonNode node) {
        try {
            return JSON.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    public static void sendText(ServerResponse res, int status, String text) {
        res.status(Status.create(status));
        res.header(HeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
        res.send(text.getBytes(StandardCharsets.UTF_8));
    }
}
