package dev.patchbay.metrics;

import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * A page as a list of byte ranges, most of them shared with the line cache: the page is copied once, into the
 * response or into one array of its exact size, instead of growing a buffer through copies.
 */
final class PageBuffer {
    private record Range(byte[] bytes, int from, int length) {}

    private final List<Range> ranges = new ArrayList<>();
    private int size;

    void add(byte[] bytes) {
        add(bytes, 0, bytes.length);
    }

    void add(byte[] bytes, int from, int length) {
        if (length == 0) return;
        ranges.add(new Range(bytes, from, length));
        size += length;
    }

    int size() {
        return size;
    }

    byte[] toByteArray() {
        byte[] page = new byte[size];
        int at = 0;
        for (Range r : ranges) {
            System.arraycopy(r.bytes, r.from, page, at, r.length);
            at += r.length;
        }
        return page;
    }

    void writeTo(OutputStream out) throws IOException {
        for (Range r : ranges) out.write(r.bytes, r.from, r.length);
    }
}
