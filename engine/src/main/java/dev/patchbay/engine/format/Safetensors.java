package dev.patchbay.engine.format;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The header of a safetensors file: an 8-byte little-endian length, then JSON naming each tensor's
 * dtype, shape and byte range in the data section that follows.
 */
public record Safetensors(Path file, long dataStart, Map<String, TensorInfo> tensors, Map<String, String> metadata) {

    /** Upper bound on the JSON header; the format's own reference implementation uses 100 MB. */
    private static final long MAX_HEADER_BYTES = 100L * 1024 * 1024;

    public record TensorInfo(String name, String dtype, long[] shape, long begin, long end) {
        public long numElements() {
            long n = 1;
            for (long d : shape) n *= d;
            return n;
        }

        public long byteSize() {
            return end - begin;
        }
    }

    public static int dtypeBytes(String dtype) {
        return switch (dtype) {
            case "F64", "I64", "U64" -> 8;
            case "F32", "I32", "U32" -> 4;
            case "F16", "BF16", "I16", "U16" -> 2;
            case "I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2" -> 1;
            default -> -1;
        };
    }

    public static Safetensors readHeader(Path file) throws IOException {
        long fileSize = Files.size(file);
        if (fileSize < 8) throw new IOException(file + ": too short to be a safetensors file (" + fileSize + " bytes)");
        byte[] json;
        long headerLen;
        try (InputStream in = Files.newInputStream(file)) {
            // A file that shrinks while read (rewritten in place) is as broken as one that was short to begin with.
            byte[] lenBytes = in.readNBytes(8);
            if (lenBytes.length < 8) throw new IOException(file + ": ends inside the safetensors header length");
            headerLen = ByteBuffer.wrap(lenBytes).order(ByteOrder.LITTLE_ENDIAN).getLong();
            if (headerLen <= 0 || headerLen > MAX_HEADER_BYTES || headerLen > fileSize - 8) {
                throw new IOException(file + ": invalid safetensors header length " + headerLen);
            }
            json = in.readNBytes((int) headerLen);
            if (json.length < headerLen) throw new IOException(file + ": ends inside the safetensors header");
        }
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(json);
        } catch (IOException e) {
            throw new IOException(file + ": safetensors header is not valid JSON", e);
        }
        if (root == null || !root.isObject()) throw new IOException(file + ": safetensors header is not a JSON object");
        long dataStart = 8 + headerLen;
        long dataSize = fileSize - dataStart;
        Map<String, TensorInfo> tensors = new LinkedHashMap<>();
        Map<String, String> metadata = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String name = e.getKey();
            JsonNode t = e.getValue();
            if (name.equals("__metadata__")) {
                t.fields()
                        .forEachRemaining(
                                m -> metadata.put(m.getKey(), m.getValue().asText()));
                continue;
            }
            String dtype = t.path("dtype").asText("");
            int width = dtypeBytes(dtype);
            if (width < 0) throw new IOException(file + ": tensor '" + name + "' has unknown dtype '" + dtype + "'");
            JsonNode shapeNode = t.path("shape");
            JsonNode offsets = t.path("data_offsets");
            if (!shapeNode.isArray() || !offsets.isArray() || offsets.size() != 2) {
                throw new IOException(file + ": tensor '" + name + "' lacks shape or data_offsets");
            }
            long[] shape = new long[shapeNode.size()];
            for (int i = 0; i < shape.length; i++) shape[i] = shapeNode.get(i).asLong(-1);
            long begin = offsets.get(0).asLong(-1);
            long end = offsets.get(1).asLong(-1);
            TensorInfo info = new TensorInfo(name, dtype, shape, begin, end);
            if (begin < 0 || end < begin || end > dataSize) {
                throw new IOException(file + ": tensor '" + name + "' data range [" + begin + ", " + end
                        + ") lies outside the file's " + dataSize + " data bytes");
            }
            if (info.numElements() * width != end - begin) {
                throw new IOException(file + ": tensor '" + name + "' has " + (end - begin) + " bytes but its shape "
                        + Arrays.toString(shape) + " of " + dtype + " needs " + info.numElements() * width);
            }
            tensors.put(name, info);
        }
        return new Safetensors(
                file, dataStart, Collections.unmodifiableMap(tensors), Collections.unmodifiableMap(metadata));
    }
}
