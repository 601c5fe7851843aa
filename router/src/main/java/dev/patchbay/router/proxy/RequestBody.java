package dev.patchbay.router.proxy;

import dev.patchbay.router.route.OpenAiError;
import io.helidon.http.HeaderValues;
import io.helidon.webserver.http.ServerRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reads a request body whole, up to a limit, however it arrives (Content-Length or chunked). A body over the limit is
 * refused with 413; one that ends before its declared length, or whose chunks are malformed, with 400. A refused body
 * is still read to its end (up to {@link #DRAIN_LIMIT_BYTES}) before the answer goes out: closing a connection the
 * client is still writing to resets it, and the client loses the answer.
 */
final class RequestBody {
    /** A refused body longer than this is not read to its end; the connection is closed instead. */
    static final long DRAIN_LIMIT_BYTES = 64L * 1024 * 1024;

    /**
     * The body, or the error to answer instead.
     *
     * @param closeConnection the connection cannot carry another request (the body was not read to its end)
     */
    record Result(byte[] bytes, OpenAiError error, boolean closeConnection) {
        static Result of(byte[] bytes) {
            return new Result(bytes, null, false);
        }

        static Result refused(OpenAiError error, boolean closeConnection) {
            return new Result(null, error, closeConnection);
        }
    }

    private RequestBody() {}

    static Result read(ServerRequest req, int limit) {
        if (!req.content().hasEntity()) {
            return Result.of(new byte[0]);
        }
        long declared = req.headers().contentLength().orElse(-1);
        if (declared > limit) {
            // A client waiting for "100 Continue" sends no body unless it is read; any other is sending it now.
            boolean drained = !req.headers().contains(HeaderValues.EXPECT_100)
                    && declared <= DRAIN_LIMIT_BYTES
                    && drain(req.content().inputStream(), DRAIN_LIMIT_BYTES);
            return Result.refused(OpenAiError.tooLarge(limit), !drained);
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream(declared > 0 ? (int) declared : 8192);
        byte[] buffer = new byte[16 * 1024];
        InputStream in = req.content().inputStream();
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                if (body.size() + n > limit) {
                    return Result.refused(OpenAiError.tooLarge(limit), !drain(in, DRAIN_LIMIT_BYTES - body.size() - n));
                }
                body.write(buffer, 0, n);
            }
        } catch (IOException | RuntimeException e) {
            // Helidon's stream throws unchecked exceptions of several kinds here: DataReader's
            // InsufficientDataAvailableException for a body cut short, NumberFormatException for a bad chunk size,
            // UncheckedIOException for a reset. Only the read is inside this try.
            return Result.refused(OpenAiError.incompleteBody(describe(e)), true);
        }
        return Result.of(body.toByteArray());
    }

    /** Reads and drops the rest of {@code in}; true when it ended within {@code maxBytes}. */
    private static boolean drain(InputStream in, long maxBytes) {
        byte[] buffer = new byte[64 * 1024];
        long left = maxBytes;
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                left -= n;
                if (left < 0) {
                    return false;
                }
            }
            return true;
        } catch (IOException | RuntimeException e) { // as in read: the body ended early or is malformed
            return false;
        }
    }

    private static String describe(Exception e) {
        String detail = e.getMessage();
        return "the request body could not be read to its end: it is shorter than its Content-Length, or its "
                + "chunked framing is broken" + (detail == null || detail.isBlank() ? "" : " (" + detail + ")");
    }
}
