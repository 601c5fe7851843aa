"""Writes Patchbay's generated Hugging Face models and PEFT LoRA adapters as GGUF files, with the pinned `gguf`
package, the way llama.cpp's convert_hf_to_gguf.py and convert_lora_to_gguf.py lay them out:

- LlamaForCausalLM and MistralForCausalLM become the `llama` architecture, Qwen2ForCausalLM `qwen2`.
- For `llama`, the rows of q_proj and k_proj (and an adapter's lora_B of them) are permuted from Hugging Face's
  rotate-half layout (dimension i pairs with i + head_dim/2) to the adjacent pairs llama.cpp's normal RoPE rotates
  (2i with 2i + 1), as convert_hf_to_gguf.py's LlamaModel.permute does; `qwen2` uses NeoX RoPE, which is rotate-half,
  and is written unpermuted.
- Weights keep the file's format (F32, F16, or BF16 as raw 16-bit words); norms and biases are F32.
- An adapter is general.type=adapter, adapter.type=lora, adapter.lora.alpha, with tensors blk.N.<name>.weight.lora_a
  ([rank, in] as PEFT stores A) and .lora_b ([out, rank]), in F32.
- The vocabulary is the generated tokenizer.json's (byte-level BPE, `gpt2` in GGUF), padded to vocab_size with
  unused tokens; the tests give token ids, so no tokenizer takes part in what is compared.

Run by llama_cpp_reference.py and llama_cpp_bench.py in the project's llama.cpp environment
(.patchbay/bin/llama-cpp-python, made by scripts/llama-cpp.sh).
"""

import json
import struct
from pathlib import Path

import gguf
import numpy as np

ARCHITECTURES = {
    "LlamaForCausalLM": gguf.MODEL_ARCH.LLAMA,
    "MistralForCausalLM": gguf.MODEL_ARCH.LLAMA,
    "Qwen2ForCausalLM": gguf.MODEL_ARCH.QWEN2,
}
PROJECTIONS = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}
NORMS = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}


def read_safetensors(path):
    """{name: (dtype, shape, numpy array)}: F32 as float32, F16 as float16, BF16 as its raw uint16 words."""
    data = Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    start = 8 + header_len
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        np_type = {"F32": "<f4", "F16": "<f2", "BF16": "<u2"}[info["dtype"]]
        array = np.frombuffer(data[start + begin : start + end], dtype=np_type).reshape(info["shape"])
        out[name] = (info["dtype"], info["shape"], array)
    return out


def to_f32(dtype, array):
    if dtype == "BF16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(np.float32)


def permute(weights, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute: rotate-half rows to adjacent pairs, per head."""
    return weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:]).swapaxes(1, 2).reshape(
        weights.shape
    )


def add_weight(writer, name, dtype, array):
    if dtype == "BF16":
        writer.add_tensor(name, np.ascontiguousarray(array), raw_dtype=gguf.GGMLQuantizationType.BF16)
    else:
        writer.add_tensor(name, np.ascontiguousarray(array))


def write_model(model_dir, out_path, permute_qk=True):
    """permute_qk=False leaves Llama's q/k rows in Hugging Face's order: a wrong file, to show the test can fail."""
    model_dir = Path(model_dir)
    config = json.loads((model_dir / "config.json").read_text())
    arch = ARCHITECTURES[config["architectures"][0]]
    n_head, n_kv = config["num_attention_heads"], config["num_key_value_heads"]
    hidden = config["hidden_size"]
    tensors = read_safetensors(model_dir / "model.safetensors")
    weight_dtype = tensors["model.layers.0.self_attn.q_proj.weight"][0]

    writer = gguf.GGUFWriter(str(out_path), gguf.MODEL_ARCH_NAMES[arch])
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_name("patchbay-generated")
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(hidden)
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_kv)
    writer.add_rope_dimension_count(hidden // n_head)
    writer.add_rope_freq_base(config["rope_theta"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_vocab_size(config["vocab_size"])
    writer.add_file_type(
        {"F32": gguf.LlamaFileType.ALL_F32, "F16": gguf.LlamaFileType.MOSTLY_F16, "BF16": gguf.LlamaFileType.MOSTLY_BF16}[
            weight_dtype
        ]
    )
    write_vocab(writer, model_dir, config)

    for name, (dtype, _shape, array) in tensors.items():
        if name == "model.embed_tokens.weight":
            add_weight(writer, "token_embd.weight", dtype, array)
        elif name == "lm_head.weight":
            add_weight(writer, "output.weight", dtype, array)
        elif name == "model.norm.weight":
            writer.add_tensor("output_norm.weight", to_f32(dtype, array))
        else:
            parts = name.split(".")  # model.layers.N.<module...>.weight|bias
            layer, module, kind = parts[2], ".".join(parts[3:-1]), parts[-1]
            if module in NORMS:
                writer.add_tensor(f"blk.{layer}.{NORMS[module]}.weight", to_f32(dtype, array))
                continue
            target = f"blk.{layer}.{PROJECTIONS[module]}.{kind}"
            if permute_qk and arch == gguf.MODEL_ARCH.LLAMA and module in ("self_attn.q_proj", "self_attn.k_proj"):
                array = permute(array, n_head if module == "self_attn.q_proj" else n_kv)
            if kind == "bias":
                writer.add_tensor(target, to_f32(dtype, array))
            else:
                add_weight(writer, target, dtype, array)
    finish(writer)


def write_vocab(writer, model_dir, config):
    tok = json.loads((model_dir / "tokenizer.json").read_text())
    vocab = config["vocab_size"]
    tokens = [f"[PAD{i}]" for i in range(vocab)]
    types = [gguf.TokenType.UNUSED] * vocab
    for text, i in tok["model"]["vocab"].items():
        tokens[i], types[i] = text, gguf.TokenType.NORMAL
    for added in tok["added_tokens"]:
        tokens[added["id"]], types[added["id"]] = added["content"], gguf.TokenType.CONTROL
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("llama-bpe")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(tok["model"]["merges"])
    writer.add_bos_token_id(config["bos_token_id"])
    writer.add_eos_token_id(config["eos_token_id"])
    writer.add_add_bos_token(False)


def write_adapter(adapter_dir, model_dir, out_path):
    adapter_dir, model_dir = Path(adapter_dir), Path(model_dir)
    config = json.loads((model_dir / "config.json").read_text())
    peft = json.loads((adapter_dir / "adapter_config.json").read_text())
    arch = ARCHITECTURES[config["architectures"][0]]
    n_head, n_kv = config["num_attention_heads"], config["num_key_value_heads"]
    writer = gguf.GGUFWriter(str(out_path), gguf.MODEL_ARCH_NAMES[arch])
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(peft["lora_alpha"]))
    for name, (dtype, _shape, array) in read_safetensors(adapter_dir / "adapter_model.safetensors").items():
        # base_model.model.model.layers.N.<module...>.lora_A.weight
        parts = name.split(".")
        layer, module, which = parts[4], ".".join(parts[5:-2]), parts[-2]
        array = to_f32(dtype, array)
        if which == "lora_B" and arch == gguf.MODEL_ARCH.LLAMA and module in ("self_attn.q_proj", "self_attn.k_proj"):
            # B carries the output rows of B·A, which the base weight's permutation reorders.
            array = permute(array, n_head if module == "self_attn.q_proj" else n_kv)
        suffix = "lora_a" if which == "lora_A" else "lora_b"
        writer.add_tensor(f"blk.{layer}.{PROJECTIONS[module]}.weight.{suffix}", np.ascontiguousarray(array))
    finish(writer)


def finish(writer):
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
