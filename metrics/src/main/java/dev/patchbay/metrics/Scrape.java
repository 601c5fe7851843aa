package dev.patchbay.metrics;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A rendered metrics page and the content type to send it with. A text page is kept as the blocks it was assembled
 * from: {@link #writeTo(OutputStream)} sends them without building the page as one array (1.3 MB with 1000
 * adapters), which {@link #body()} does on first use. One request's object: not for sharing between threads.
 */
public final class Scrape {
    private final String contentType;
    private final PageBuffer blocks;
    private byte[] body;

    Scrape(String contentType, byte[] body) {
        this.contentType = contentType;
        this.blocks = null;
        this.body = body;
    }

    Scrape(String contentType, PageBuffer blocks) {
        this.contentType = contentType;
        this.blocks = blocks;
    }

    public String contentType() {
        return contentType;
    }

    /** The page as one array. */
    public byte[] body() {
        if (body == null) body = blocks.toByteArray();
        return body;
    }

    /** Bytes of the page. */
    public int size() {
        return body != null ? body.length : blocks.size();
    }

    /** Writes the page into {@code out} (a response body), without copying it into one array first. */
    public void writeTo(OutputStream out) throws IOException {
        if (body != null) out.write(body);
        else blocks.writeTo(out);
    }

    /** The page as text; meaningful for the text formats only. */
    public String text() {
        return new String(body(), StandardCharsets.UTF_8);
    }
}
