"""llama.cpp's greedy decoding of generated models, the reference of LlamaCppDifferentialTest.

Usage: llama_cpp_reference.py JOB.json OUT.json

JOB.json: {"cases": [{"name", "model": dir, "adapter": dir or null, "prompt": [ids], "steps": n, "work": dir,
"permute_qk": false to write Llama's q/k unpermuted (a wrong file)}]}.
For each work directory the model (and adapter) are written as GGUF there (gguf_convert.py), loaded by llama-cpp-python
with an F32 KV cache, flash attention off and logits for every position, and decoded greedily from the prompt:
OUT.json gets, per case, the "tokens" chosen at each of the steps and the "logits" each was chosen from (after the
prompt, then after each chosen token).

Runs only in the project's llama.cpp environment (.patchbay/bin/llama-cpp-python, made by scripts/llama-cpp.sh), and
refuses other versions of llama-cpp-python or gguf than the ones pinned there.
"""

import json
import sys
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

PINNED = {"llama_cpp_python": "0.3.36", "gguf": "0.19.0"}
for package, pinned in PINNED.items():
    if version(package) != pinned:
        sys.exit(f"{package} {version(package)} is installed; the reference needs {pinned} (scripts/llama-cpp.sh)")

import llama_cpp  # noqa: E402
import numpy as np  # noqa: E402

import gguf_convert  # noqa: E402


def load(case):
    """The case's model (and adapter) written as GGUF into its work directory, loaded by llama.cpp."""
    work = Path(case["work"])
    work.mkdir(parents=True, exist_ok=True)
    model_file = work / "model.gguf"
    gguf_convert.write_model(case["model"], model_file, case.get("permute_qk", True))
    lora_file = None
    if case.get("adapter"):
        lora_file = work / "adapter.gguf"
        gguf_convert.write_adapter(case["adapter"], case["model"], lora_file)
    return llama_cpp.Llama(
        model_path=str(model_file),
        lora_path=str(lora_file) if lora_file else None,
        n_ctx=128,
        n_batch=64,
        n_ubatch=64,
        n_threads=2,
        n_threads_batch=2,
        logits_all=True,
        # llama.cpp keeps keys and values in F16 unless told otherwise; F32 leaves only the weights' format.
        type_k=llama_cpp.GGML_TYPE_F32,
        type_v=llama_cpp.GGML_TYPE_F32,
        flash_attn=False,
        verbose=False,
    )


def run(llm, case):
    prompt, steps = case["prompt"], case["steps"]
    tokens, logits = [], []
    llm.reset()
    llm.eval(prompt)
    for step in range(steps):
        row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        token = int(np.argmax(row))
        logits.append(row.tolist())
        tokens.append(token)
        if step + 1 < steps:
            llm.eval([token])
    return {"name": case["name"], "tokens": tokens, "logits": logits}


def main():
    job = json.loads(Path(sys.argv[1]).read_text())
    # Cases that share a work directory share the model: it is written and loaded once.
    loaded, results = {}, []
    for case in job["cases"]:
        if case["work"] not in loaded:
            for llm in loaded.values():
                llm.close()
            loaded = {case["work"]: load(case)}
        results.append(run(loaded[case["work"]], case))
    for llm in loaded.values():
        llm.close()
    out = {"llama_cpp_python": PINNED["llama_cpp_python"], "cases": results}
    Path(sys.argv[2]).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
