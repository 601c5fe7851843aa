package dev.patchbay.testkit;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Answers for the JDK's HTTP server, as the tests' stand-in model servers send them. */
public final class HttpAnswers {
    private HttpAnswers() {}

    /** A whole answer: the status, a Content-Type and a body of known length, then the exchange closed. */
    public static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", contentType);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
