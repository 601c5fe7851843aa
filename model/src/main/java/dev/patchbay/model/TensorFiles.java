package dev.patchbay.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.engine.format.Safetensors;
import dev.patchbay.engine.model.ModelConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The safetensors files of a model directory (one {@code model.safetensors}, or shards listed by
 * {@code model.safetensors.index.json}), read through memory maps: weight matrices keep their 16-bit formats, other
 * tensors are converted to F32.
 */
public final class TensorFiles {
    public static final String SINGLE_FILE = "model.safetensors";
    public static final String INDEX_FILE = "model.safetensors.index.json";

    /** The file that says which tensors there are: the single file or the shard index. */
    private final Path listing;

    private final Map<String, Safetensors> byTensor;

    private TensorFiles(Path listing, Map<String, Safetensors> byTensor) {
        this.listing = listing;
        this.byTensor = byTensor;
    }

    public static TensorFiles open(Path dir) throws IOException {
        Path single = dir.resolve(SINGLE_FILE);
        Path index = dir.resolve(INDEX_FILE);
        Map<String, Safetensors> byTensor = new LinkedHashMap<>();
        if (Files.isRegularFile(index)) {
            JsonNode map = ModelConfig.readTree(index).path("weight_map");
            if (!map.isObject() || map.isEmpty()) throw new IOException(index + ": has no 'weight_map' object");
            Map<String, Safetensors> shards = new LinkedHashMap<>();
            for (String shard : new TreeSet<>(iterable(map))) {
                Path file = dir.resolve(shard);
                if (!Files.isRegularFile(file))
                    throw new IOException(index + ": names shard " + shard + ", which does not exist");
                shards.put(shard, Safetensors.readHeader(file));
            }
            for (var e : map.properties()) {
                Safetensors st = shards.get(e.getValue().asText());
                if (!st.tensors().containsKey(e.getKey())) {
                    throw new IOException(
                            st.file() + ": lacks tensor '" + e.getKey() + "' that " + index + " places there");
                }
                byTensor.put(e.getKey(), st);
            }
        } else if (Files.isRegularFile(single)) {
            Safetensors st = Safetensors.readHeader(single);
            for (String name : st.tensors().keySet()) byTensor.put(name, st);
        } else {
            throw new IOException(dir + ": no " + SINGLE_FILE + " nor " + INDEX_FILE);
        }
        return new TensorFiles(Files.isRegularFile(index) ? index : single, byTensor);
    }

    private static List<String> iterable(JsonNode map) {
        List<String> out = new ArrayList<>();
        map.forEach(v -> out.add(v.asText()));
        return out;
    }

    public boolean has(String name) {
        return byTensor.containsKey(name);
    }

    /** Distinct files, in a stable order, for progress reports. */
    public List<Path> files() {
        return byTensor.values().stream().map(Safetensors::file).distinct().toList();
    }

    public Path fileOf(String name) {
        return byTensor.get(name).file();
    }

    public String dtypeOf(String name) {
        return byTensor.get(name).tensors().get(name).dtype();
    }

    /** Reads a tensor as F32, checking its shape. */
    public float[] read(String name, long... shape) throws IOException {
        Safetensors st = byTensor.get(name);
        if (st == null) throw new IOException(listing + ": the weights lack tensor '" + name + "'");
        return read(st, name, shape);
    }

    /** Reads a {@code [rows, cols]} weight matrix: BF16 and F16 stay 16-bit, F32 stays F32. */
    Matrix readMatrix(String name, int rows, int cols) throws IOException {
        Safetensors st = byTensor.get(name);
        if (st == null) throw new IOException(listing + ": the weights lack tensor '" + name + "'");
        return readMatrix(st, name, rows, cols);
    }

    /** Reads a {@code [rows, cols]} matrix of a safetensors file: BF16 and F16 stay 16-bit, F32 stays F32. */
    static Matrix readMatrix(Safetensors st, String name, int rows, int cols) throws IOException {
        String dtype = halfDtype(st, name);
        if (dtype == null) return new Matrix.F32(read(st, name, rows, cols), rows, cols);
        short[] out = new short[rows * cols];
        map(st, name, rows, cols).asShortBuffer().get(out);
        return half(dtype, out, rows, cols);
    }

    /** Reads a {@code [rows, cols]} matrix and returns its {@code [cols, rows]} transpose, BF16 and F16 kept. */
    static Matrix readMatrixTransposed(Safetensors st, String name, int rows, int cols) throws IOException {
        String dtype = halfDtype(st, name);
        if (dtype == null) return new Matrix.F32(read(st, name, rows, cols), rows, cols).transposed();
        var values = map(st, name, rows, cols).asShortBuffer();
        short[] t = new short[rows * cols];
        for (int r = 0; r < rows; r++) for (int c = 0; c < cols; c++) t[c * rows + r] = values.get(r * cols + c);
        return half(dtype, t, cols, rows);
    }

    /** "BF16" or "F16" when the tensor is held in one of them, else null (F32, or a tensor {@link #read} refuses). */
    private static String halfDtype(Safetensors st, String name) {
        Safetensors.TensorInfo info = st.tensors().get(name);
        return info != null && (info.dtype().equals("BF16") || info.dtype().equals("F16")) ? info.dtype() : null;
    }

    private static Matrix half(String dtype, short[] values, int rows, int cols) {
        return dtype.equals("BF16") ? Matrix.Bf16.of(values, rows, cols) : Matrix.F16.of(values, rows, cols);
    }

    private static ByteBuffer map(Safetensors st, String name, long... shape) throws IOException {
        Safetensors.TensorInfo t = st.tensors().get(name);
        if (t == null) throw new IOException(st.file() + ": lacks tensor '" + name + "'");
        if (!Arrays.equals(t.shape(), shape)) {
            throw new IOException(st.file() + ": tensor '" + name + "' has shape " + Arrays.toString(t.shape())
                    + " but the config needs " + Arrays.toString(shape));
        }
        if (t.numElements() > Integer.MAX_VALUE - 16) {
            throw new IOException(
                    st.file() + ": tensor '" + name + "' is too large (" + t.numElements() + " elements)");
        }
        try (FileChannel ch = FileChannel.open(st.file(), StandardOpenOption.READ)) {
            return ch.map(FileChannel.MapMode.READ_ONLY, st.dataStart() + t.begin(), t.byteSize())
                    .order(ByteOrder.LITTLE_ENDIAN);
        }
    }

    /** Reads a tensor of a safetensors file as F32, checking its shape. */
    public static float[] read(Safetensors st, String name, long... shape) throws IOException {
        ByteBuffer bytes = map(st, name, shape);
        Safetensors.TensorInfo t = st.tensors().get(name);
        float[] out = new float[(int) t.numElements()];
        switch (t.dtype()) {
            case "F32" -> bytes.asFloatBuffer().get(out);
            case "F16" -> {
                var s = bytes.asShortBuffer();
                for (int i = 0; i < out.length; i++) out[i] = Float.float16ToFloat(s.get(i));
            }
            case "BF16" -> {
                var s = bytes.asShortBuffer();
                for (int i = 0; i < out.length; i++) out[i] = Float.intBitsToFloat(s.get(i) << 16);
            }
            default ->
                throw new IOException(st.file() + ": tensor '" + name + "' has dtype " + t.dtype()
                        + "; only F32, F16 and BF16 weights are supported");
        }
        return out;
    }

    /** BF16 bits of a float, rounded to nearest even, as PyTorch converts. */
    public static short toBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) return (short) 0x7fc0;
        int rounding = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }
}
