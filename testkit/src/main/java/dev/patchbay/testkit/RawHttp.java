package dev.patchbay.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Sends exact bytes over a plain socket and reads the HTTP/1.1 answer: for requests an HTTP client refuses to
 * send (a body shorter than its Content-Length, a bad chunk size). The request should carry
 * {@code Connection: close}; the answer is read until the server closes or its Content-Length is complete.
 */
public final class RawHttp {
    /** Long enough that a busy machine never hits it; it turns a server that never answers into a failure. */
    private static final int READ_TIMEOUT_MILLIS = 60_000;

    private RawHttp() {}

    /** One HTTP answer: status, headers with lower-case names, body as text. */
    public record Response(int status, Map<String, String> headers, String body) {
        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    /** Writes {@code request} and reads the answer; the write side stays open. */
    public static Response exchange(int port, String request) throws IOException {
        return exchange(port, request.getBytes(StandardCharsets.UTF_8), false);
    }

    /**
     * Writes {@code request}; when {@code halfClose} the write side is shut down after it (the client sends
     * nothing more), then the answer is read.
     */
    public static Response exchange(int port, byte[] request, boolean halfClose) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), READ_TIMEOUT_MILLIS);
            socket.setSoTimeout(READ_TIMEOUT_MILLIS);
            OutputStream out = socket.getOutputStream();
            out.write(request);
            out.flush();
            if (halfClose) {
                socket.shutdownOutput();
            }
            return read(socket.getInputStream());
        }
    }

    private static Response read(InputStream in) throws IOException {
        String statusLine = line(in);
        if (statusLine == null || !statusLine.startsWith("HTTP/1.")) {
            throw new IOException("no HTTP status line, got: " + statusLine);
        }
        int status = Integer.parseInt(statusLine.split(" ", 3)[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String header = line(in); header != null && !header.isEmpty(); header = line(in)) {
            int colon = header.indexOf(':');
            headers.put(
                    header.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    header.substring(colon + 1).trim());
        }
        byte[] body;
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            body = chunked(in);
        } else if (headers.containsKey("content-length")) {
            body = in.readNBytes(Integer.parseInt(headers.get("content-length")));
        } else {
            body = untilClosed(in);
        }
        return new Response(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    private static byte[] chunked(InputStream in) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (String size = line(in); size != null; size = line(in)) {
            int length = Integer.parseInt(size.split(";")[0].trim(), 16);
            if (length == 0) {
                break;
            }
            body.write(in.readNBytes(length));
            line(in);
        }
        return body.toByteArray();
    }

    private static byte[] untilClosed(InputStream in) throws IOException {
        try {
            return in.readAllBytes();
        } catch (SocketTimeoutException e) {
            throw new IOException("the server neither closed the connection nor said how long its answer is", e);
        }
    }

    /** One CRLF-terminated line without its terminator, or null at end of stream. */
    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != -1) {
            if (b == '\n') {
                byte[] raw = bytes.toByteArray();
                int end = raw.length > 0 && raw[raw.length - 1] == '\r' ? raw.length - 1 : raw.length;
                return new String(raw, 0, end, StandardCharsets.ISO_8859_1);
            }
            bytes.write(b);
        }
        return bytes.size() == 0 ? null : bytes.toString(StandardCharsets.ISO_8859_1);
    }
}
