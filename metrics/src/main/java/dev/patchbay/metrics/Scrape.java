package dev.patchbay.metrics;

import java.nio.charset.StandardCharsets;

/** A rendered metrics page and the content type to send it with. */
public record Scrape(String contentType, byte[] body) {

    /** The body as text; meaningful for the text formats only. */
    public String text() {
        return new String(body, StandardCharsets.UTF_8);
    }
}
