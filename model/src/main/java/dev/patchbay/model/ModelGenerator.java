package dev.patchbay.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.adapter.PeftReader;
import dev.patchbay.engine.format.SafetensorsWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes random Llama-family models and PEFT LoRA adapters in the real Hugging Face file formats, so the loader,
 * tokenizer and executor can be tested and measured without downloading weights.
 */
public final class ModelGenerator {
    public static final String BOS = "<|begin_of_text|>";
    public static final String EOS = "<|end_of_text|>";
    public static final String IM_START = "<|im_start|>";
    public static final String IM_END = "<|im_end|>";
    /** ChatML, as Qwen2 and SmolLM2 use it, with a BOS token in front. */
    public static final String CHAT_TEMPLATE = "{{ bos_token }}{% for message in messages %}"
            + "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] | trim + '<|im_end|>\\n' }}"
            + "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

    /** Text the tokenizer's merges are learned from. */
    private static final String CORPUS = """
            Patchbay serves many LoRA adapters on shared base models and routes their traffic. The engine schedules
            requests in continuous batches; the executor runs the transformer on the CPU, one step for the whole batch.
            Each request may name its own adapter, and the adapters of one batch are applied together in the same
            step. The model reads its weights from safetensors files, its vocabulary from tokenizer.json and its chat
            format from tokenizer_config.json. Hello world! How are you today? I'm fine, thanks; and you? We'll see.
            The quick brown fox jumps over the lazy dog. 0123456789 12 345 6789. There is the thing that they
            wanted: the answer, then the question, and the other one in the middle of the morning.
            """;

    /** The shapes and formats of a generated model. */
    public record Spec(
            String architecture,
            int hidden,
            int layers,
            int heads,
            int kvHeads,
            int intermediate,
            int vocab,
            String dtype,
            long seed,
            boolean tieEmbeddings,
            String ropeScalingJson) {
        public Spec {
            if (hidden % heads != 0 || heads % kvHeads != 0 || (hidden / heads) % 2 != 0) {
                throw new IllegalArgumentException("hidden " + hidden + ", heads " + heads + " and kv heads " + kvHeads
                        + " must give an even head size shared by whole groups");
            }
            if (!List.of("F32", "F16", "BF16").contains(dtype))
                throw new IllegalArgumentException("dtype must be F32, F16 or BF16");
        }

        /** A model small enough for unit tests. */
        public static Spec tiny() {
            return new Spec("LlamaForCausalLM", 64, 2, 4, 2, 128, 400, "F32", 7, false, null);
        }

        /** The shapes of SmolLM2-135M. */
        public static Spec smolLm2() {
            return new Spec("LlamaForCausalLM", 576, 30, 9, 3, 1536, 49152, "BF16", 7, true, null);
        }

        public Spec withArchitecture(String a) {
            return new Spec(
                    a,
                    hidden,
                    layers,
                    heads,
                    kvHeads,
                    intermediate,
                    vocab,
                    dtype,
                    seed,
                    tieEmbeddings,
                    ropeScalingJson);
        }

        public Spec withDtype(String d) {
            return new Spec(
                    architecture,
                    hidden,
                    layers,
                    heads,
                    kvHeads,
                    intermediate,
                    vocab,
                    d,
                    seed,
                    tieEmbeddings,
                    ropeScalingJson);
        }

        public Spec withSeed(long s) {
            return new Spec(
                    architecture,
                    hidden,
                    layers,
                    heads,
                    kvHeads,
                    intermediate,
                    vocab,
                    dtype,
                    s,
                    tieEmbeddings,
                    ropeScalingJson);
        }

        public Spec withTiedEmbeddings(boolean t) {
            return new Spec(
                    architecture, hidden, layers, heads, kvHeads, intermediate, vocab, dtype, seed, t, ropeScalingJson);
        }

        public Spec withRopeScaling(String json) {
            return new Spec(
                    architecture,
                    hidden,
                    layers,
                    heads,
                    kvHeads,
                    intermediate,
                    vocab,
                    dtype,
                    seed,
                    tieEmbeddings,
                    json);
        }

        int headDim() {
            return hidden / heads;
        }

        boolean qwen2() {
            return architecture.equals("Qwen2ForCausalLM");
        }
    }

    private static final List<String> MLP = List.of("gate_proj", "up_proj", "down_proj");
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ModelGenerator() {}

    /** Writes config.json, model.safetensors, tokenizer.json and tokenizer_config.json into {@code dir}. */
    public static void writeModel(Path dir, Spec spec) throws IOException {
        Files.createDirectories(dir);
        int tokenizerSize = writeTokenizer(dir, spec);
        if (tokenizerSize > spec.vocab()) {
            throw new IllegalArgumentException(
                    "vocab " + spec.vocab() + " is smaller than the tokenizer's " + tokenizerSize + " tokens");
        }
        writeConfig(dir, spec, tokenizerSize - 4, tokenizerSize - 1);
        SplittableRandom rng = new SplittableRandom(spec.seed());
        int h = spec.hidden(),
                q = spec.heads() * spec.headDim(),
                kv = spec.kvHeads() * spec.headDim(),
                inter = spec.intermediate();
        SafetensorsWriter st = new SafetensorsWriter();
        add(st, spec, "model.embed_tokens.weight", new long[] {spec.vocab(), h}, gaussian(rng, spec.vocab() * h, 1.0));
        for (int l = 0; l < spec.layers(); l++) {
            String pre = "model.layers." + l + ".";
            add(st, spec, pre + "input_layernorm.weight", new long[] {h}, norm(rng, h));
            add(st, spec, pre + "self_attn.q_proj.weight", new long[] {q, h}, gaussian(rng, q * h, 1 / Math.sqrt(h)));
            add(st, spec, pre + "self_attn.k_proj.weight", new long[] {kv, h}, gaussian(rng, kv * h, 1 / Math.sqrt(h)));
            add(st, spec, pre + "self_attn.v_proj.weight", new long[] {kv, h}, gaussian(rng, kv * h, 1 / Math.sqrt(h)));
            if (spec.qwen2()) {
                add(st, spec, pre + "self_attn.q_proj.bias", new long[] {q}, gaussian(rng, q, 0.1));
                add(st, spec, pre + "self_attn.k_proj.bias", new long[] {kv}, gaussian(rng, kv, 0.1));
                add(st, spec, pre + "self_attn.v_proj.bias", new long[] {kv}, gaussian(rng, kv, 0.1));
            }
            add(st, spec, pre + "self_attn.o_proj.weight", new long[] {h, q}, gaussian(rng, h * q, 1 / Math.sqrt(q)));
            add(st, spec, pre + "post_attention_layernorm.weight", new long[] {h}, norm(rng, h));
            add(
                    st,
                    spec,
                    pre + "mlp.gate_proj.weight",
                    new long[] {inter, h},
                    gaussian(rng, inter * h, 1 / Math.sqrt(h)));
            add(
                    st,
                    spec,
                    pre + "mlp.up_proj.weight",
                    new long[] {inter, h},
                    gaussian(rng, inter * h, 1 / Math.sqrt(h)));
            add(
                    st,
                    spec,
                    pre + "mlp.down_proj.weight",
                    new long[] {h, inter},
                    gaussian(rng, h * inter, 1 / Math.sqrt(inter)));
        }
        add(st, spec, "model.norm.weight", new long[] {h}, norm(rng, h));
        if (!spec.tieEmbeddings()) {
            add(
                    st,
                    spec,
                    "lm_head.weight",
                    new long[] {spec.vocab(), h},
                    gaussian(rng, spec.vocab() * h, 1 / Math.sqrt(h)));
        }
        st.write(dir.resolve(TensorFiles.SINGLE_FILE));
    }

    /**
     * Writes a PEFT LoRA adapter for a model of {@code spec}: adapter_config.json and adapter_model.safetensors with
     * lora_A ({@code rank x in}) and lora_B ({@code out x rank}) of every layer's target projections.
     */
    public static void writeAdapter(Path dir, Spec spec, int rank, double alpha, List<String> targets, long seed)
            throws IOException {
        Files.createDirectories(dir);
        ObjectNode cfg = JSON.createObjectNode();
        cfg.put("peft_type", "LORA");
        cfg.put("task_type", "CAUSAL_LM");
        cfg.put("r", rank);
        cfg.put("lora_alpha", alpha);
        cfg.put("lora_dropout", 0.0);
        cfg.put("bias", "none");
        cfg.put("base_model_name_or_path", "patchbay-generated");
        ArrayNode t = cfg.putArray("target_modules");
        targets.forEach(t::add);
        JSON.writeValue(dir.resolve(PeftReader.CONFIG_FILE).toFile(), cfg);

        Map<String, int[]> shapes = shapes(spec);
        SplittableRandom rng = new SplittableRandom(seed);
        SafetensorsWriter st = new SafetensorsWriter();
        for (int l = 0; l < spec.layers(); l++) {
            for (String m : targets) {
                int[] io = shapes.get(m);
                if (io == null)
                    throw new IllegalArgumentException("unknown target module " + m + "; known: " + shapes.keySet());
                String pre = "base_model.model.model.layers." + l + (MLP.contains(m) ? ".mlp." : ".self_attn.") + m;
                add(
                        st,
                        spec,
                        pre + ".lora_A.weight",
                        new long[] {rank, io[0]},
                        gaussian(rng, rank * io[0], 1 / Math.sqrt(io[0])));
                add(
                        st,
                        spec,
                        pre + ".lora_B.weight",
                        new long[] {io[1], rank},
                        gaussian(rng, io[1] * rank, 0.2 / Math.sqrt(rank)));
            }
        }
        st.write(dir.resolve(PeftReader.WEIGHTS_FILE));
    }

    /** {input, output} sizes of each LoRA target, as the engine's ModelConfig names them. */
    static Map<String, int[]> shapes(Spec spec) {
        int q = spec.heads() * spec.headDim(), kv = spec.kvHeads() * spec.headDim();
        Map<String, int[]> m = new LinkedHashMap<>();
        m.put("q_proj", new int[] {spec.hidden(), q});
        m.put("k_proj", new int[] {spec.hidden(), kv});
        m.put("v_proj", new int[] {spec.hidden(), kv});
        m.put("o_proj", new int[] {q, spec.hidden()});
        m.put("gate_proj", new int[] {spec.hidden(), spec.intermediate()});
        m.put("up_proj", new int[] {spec.hidden(), spec.intermediate()});
        m.put("down_proj", new int[] {spec.intermediate(), spec.hidden()});
        return m;
    }

    private static void writeConfig(Path dir, Spec spec, int bosId, int eosId) throws IOException {
        ObjectNode c = JSON.createObjectNode();
        c.putArray("architectures").add(spec.architecture());
        c.put("model_type", spec.qwen2() ? "qwen2" : spec.architecture().startsWith("Mistral") ? "mistral" : "llama");
        c.put("hidden_size", spec.hidden());
        c.put("intermediate_size", spec.intermediate());
        c.put("num_attention_heads", spec.heads());
        c.put("num_hidden_layers", spec.layers());
        c.put("num_key_value_heads", spec.kvHeads());
        c.put("vocab_size", spec.vocab());
        c.put("max_position_embeddings", 2048);
        c.put("rms_norm_eps", 1e-5);
        c.put("rope_theta", 10000.0);
        c.put("tie_word_embeddings", spec.tieEmbeddings());
        c.put("hidden_act", "silu");
        c.put("bos_token_id", bosId);
        c.put("eos_token_id", eosId);
        c.put(
                "torch_dtype",
                switch (spec.dtype()) {
                    case "F16" -> "float16";
                    case "BF16" -> "bfloat16";
                    default -> "float32";
                });
        if (spec.ropeScalingJson() != null) c.set("rope_scaling", JSON.readTree(spec.ropeScalingJson()));
        else c.putNull("rope_scaling");
        JSON.writeValue(dir.resolve("config.json").toFile(), c);
    }

    /** Writes a byte-level BPE tokenizer with merges learned from a small corpus; returns its number of tokens. */
    private static int writeTokenizer(Path dir, Spec spec) throws IOException {
        int specials = 4;
        int merges = Math.max(0, Math.min(spec.vocab() - 256 - specials, 400));
        List<String[]> learned = learnMerges(merges);
        Map<String, Integer> vocab = new LinkedHashMap<>();
        for (int b = 0; b < 256; b++) vocab.put(BpeTokenizer.bytesToUnicode(new byte[] {(byte) b}), b);
        for (String[] m : learned) vocab.putIfAbsent(m[0] + m[1], vocab.size());

        ObjectNode root = JSON.createObjectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        ArrayNode added = root.putArray("added_tokens");
        int id = vocab.size();
        for (String s : List.of(BOS, EOS, IM_START, IM_END)) {
            ObjectNode a = added.addObject();
            a.put("id", id++);
            a.put("content", s);
            a.put("single_word", false);
            a.put("lstrip", false);
            a.put("rstrip", false);
            a.put("normalized", false);
            a.put("special", true);
        }
        root.putNull("normalizer");
        ObjectNode pre = root.putObject("pre_tokenizer");
        pre.put("type", "Sequence");
        ArrayNode steps = pre.putArray("pretokenizers");
        ObjectNode split = steps.addObject();
        split.put("type", "Split");
        split.putObject("pattern").put("Regex", BpeTokenizer.LLAMA3_PATTERN);
        split.put("behavior", "Isolated");
        split.put("invert", false);
        ObjectNode bl = steps.addObject();
        bl.put("type", "ByteLevel");
        bl.put("add_prefix_space", false);
        bl.put("trim_offsets", true);
        bl.put("use_regex", false);
        root.putObject("post_processor")
                .put("type", "ByteLevel")
                .put("add_prefix_space", true)
                .put("trim_offsets", false)
                .put("use_regex", true);
        root.putObject("decoder")
                .put("type", "ByteLevel")
                .put("add_prefix_space", true)
                .put("trim_offsets", true)
                .put("use_regex", true);
        ObjectNode model = root.putObject("model");
        model.put("type", "BPE");
        model.putNull("dropout");
        model.putNull("unk_token");
        model.put("fuse_unk", false);
        model.put("byte_fallback", false);
        model.put("ignore_merges", false);
        ObjectNode v = model.putObject("vocab");
        vocab.forEach(v::put);
        ArrayNode ms = model.putArray("merges");
        for (String[] m : learned) ms.add(m[0] + " " + m[1]);
        JSON.writeValue(dir.resolve("tokenizer.json").toFile(), root);

        ObjectNode tc = JSON.createObjectNode();
        tc.put("bos_token", BOS);
        tc.put("eos_token", IM_END);
        tc.put("add_bos_token", false);
        tc.put("model_max_length", 2048);
        tc.put("tokenizer_class", "PreTrainedTokenizerFast");
        tc.put("chat_template", CHAT_TEMPLATE);
        JSON.writeValue(dir.resolve("tokenizer_config.json").toFile(), tc);
        return id;
    }

    /** Classic BPE training: repeatedly merge the most frequent adjacent pair (ties broken by text). */
    static List<String[]> learnMerges(int count) {
        Map<List<String>, Integer> words = new HashMap<>();
        Matcher m = Pattern.compile(BpeTokenizer.LLAMA3_PATTERN, Pattern.UNICODE_CHARACTER_CLASS)
                .matcher(CORPUS);
        while (m.find()) {
            String piece = BpeTokenizer.bytesToUnicode(m.group().getBytes(StandardCharsets.UTF_8));
            List<String> symbols = new ArrayList<>();
            for (int i = 0; i < piece.length(); i++) symbols.add(String.valueOf(piece.charAt(i)));
            words.merge(symbols, 1, Integer::sum);
        }
        List<String[]> merges = new ArrayList<>();
        while (merges.size() < count) {
            Map<String, Integer> pairs = new HashMap<>();
            for (var e : words.entrySet()) {
                List<String> s = e.getKey();
                for (int i = 0; i + 1 < s.size(); i++)
                    pairs.merge(s.get(i) + " " + s.get(i + 1), e.getValue(), Integer::sum);
            }
            String best = null;
            int bestCount = 1;
            for (var e : pairs.entrySet()) {
                if (e.getValue() > bestCount
                        || (e.getValue() == bestCount
                                && best != null
                                && e.getKey().compareTo(best) < 0)) {
                    best = e.getKey();
                    bestCount = e.getValue();
                }
            }
            if (best == null) break;
            String[] pair = best.split(" ", 2);
            merges.add(pair);
            Map<List<String>, Integer> next = new HashMap<>();
            for (var e : words.entrySet()) {
                List<String> s = e.getKey(), out = new ArrayList<>(s.size());
                for (int i = 0; i < s.size(); i++) {
                    if (i + 1 < s.size()
                            && s.get(i).equals(pair[0])
                            && s.get(i + 1).equals(pair[1])) {
                        out.add(pair[0] + pair[1]);
                        i++;
                    } else {
                        out.add(s.get(i));
                    }
                }
                next.merge(out, e.getValue(), Integer::sum);
            }
            words = next;
        }
        return merges;
    }

    private static float[] gaussian(SplittableRandom rng, int n, double std) {
        float[] out = new float[n];
        for (int i = 0; i < n; i++) out[i] = (float) (rng.nextGaussian() * std);
        return out;
    }

    private static float[] norm(SplittableRandom rng, int n) {
        float[] out = new float[n];
        for (int i = 0; i < n; i++) out[i] = (float) (1 + rng.nextGaussian() * 0.1);
        return out;
    }

    private static void add(SafetensorsWriter st, Spec spec, String name, long[] shape, float[] values) {
        st.add(name, spec.dtype(), shape, encode(values, spec.dtype()));
    }

    /** Little-endian bytes of {@code values} in F32, F16 or BF16. */
    public static byte[] encode(float[] values, String dtype) {
        int width = dtype.equals("F32") ? 4 : 2;
        ByteBuffer b = ByteBuffer.allocate(values.length * width).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : values) {
            switch (dtype) {
                case "F32" -> b.putFloat(f);
                case "F16" -> b.putShort(Float.floatToFloat16(f));
                case "BF16" -> b.putShort(TensorFiles.toBf16(f));
                default -> throw new IllegalArgumentException("unknown dtype " + dtype);
            }
        }
        return b.array();
    }
}
