package dev.patchbay.engine.format;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Writes tensors in the safetensors format (demo adapters, generated test models). */
public final class SafetensorsWriter {
    private record Entry(String name, String dtype, long[] shape, byte[] data) {}

    private final List<Entry> entries = new ArrayList<>();
    private final Map<String, String> metadata;

    public SafetensorsWriter(Map<String, String> metadata) {
        this.metadata = metadata;
    }

    public SafetensorsWriter() {
        this(Map.of("format", "pt"));
    }

    /** Adds a tensor whose little-endian bytes are already encoded in {@code dtype}. */
    public SafetensorsWriter add(String name, String dtype, long[] shape, byte[] data) {
        long n = 1;
        for (long d : shape) n *= d;
        if (n * Safetensors.dtypeBytes(dtype) != data.length) {
            throw new IllegalArgumentException(name + ": " + data.length + " bytes do not match shape and " + dtype);
        }
        entries.add(new Entry(name, dtype, shape.clone(), data));
        return this;
    }

    public SafetensorsWriter addF32(String name, long[] shape, float[] values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(values);
        return add(name, "F32", shape, b.array());
    }

    public void write(Path file) throws IOException {
        ObjectMapper om = new ObjectMapper();
        ObjectNode header = om.createObjectNode();
        if (!metadata.isEmpty()) {
            ObjectNode meta = header.putObject("__metadata__");
            metadata.forEach(meta::put);
        }
        long offset = 0;
        for (Entry e : entries) {
            ObjectNode t = header.putObject(e.name);
            t.put("dtype", e.dtype);
            var shape = t.putArray("shape");
            for (long d : e.shape) shape.add(d);
            var offsets = t.putArray("data_offsets");
            offsets.add(offset);
            offsets.add(offset + e.data.length);
            offset += e.data.length;
        }
        byte[] json = om.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        int pad = (8 - json.length % 8) % 8; // keeps the data section 8-byte aligned, as the reference writer does
        byte[] padded = new byte[json.length + pad];
        System.arraycopy(json, 0, padded, 0, json.length);
        for (int i = json.length; i < padded.length; i++) padded[i] = ' ';
        try (OutputStream out = Files.newOutputStream(file)) {
            out.write(ByteBuffer.allocate(8)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .putLong(padded.length)
                    .array());
            out.write(padded);
            for (Entry e : entries) out.write(e.data);
        }
    }
}
