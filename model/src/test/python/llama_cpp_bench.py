"""llama.cpp's side of scripts/llama-cpp.sh bench, and the table that puts both sides and the bandwidth probe together.

  llama_cpp_bench.py measure MODEL_DIR WORK_DIR THREADS REPEATS
      Writes MODEL_DIR (a generated Hugging Face model) as GGUF into WORK_DIR and measures llama.cpp through
      llama-cpp-python with THREADS threads, at llama.cpp's context defaults (F16 KV cache, flash attention off):
      decode at batch 1 (64 single-token llama_decode calls after a 32-token prompt, as llama-bench's tg test) and
      prompt processing of a 512-token prompt in one llama_decode of a 512-token batch (llama-bench's pp512); the
      median of REPEATS, after one warm-up of each. Prints one JSON object.
  llama_cpp_bench.py table PROBE.json PATCHBAY.json LLAMA_CPP.json
      The Markdown table of docs/model.md, with every figure also as a fraction of the probe's bandwidth.
"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

DECODE_STEPS = 64
PROMPT = 512


def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return -1


def measure(model_dir, work_dir, threads, repeats):
    import llama_cpp

    import gguf_convert

    work = Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    gguf_file = work / "model.gguf"
    if not gguf_file.exists() or gguf_file.stat().st_mtime < (Path(model_dir) / "model.safetensors").stat().st_mtime:
        gguf_convert.write_model(model_dir, gguf_file)
    llm = llama_cpp.Llama(
        model_path=str(gguf_file),
        n_ctx=1024,
        n_batch=PROMPT,
        n_ubatch=PROMPT,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    prompt = [100 + (i * 37) % 20000 for i in range(PROMPT)]

    def prompt_tps():
        llm.reset()
        start = time.perf_counter()
        llm.eval(prompt)
        return PROMPT / (time.perf_counter() - start)

    def decode_tps():
        llm.reset()
        llm.eval(prompt[:32])
        start = time.perf_counter()
        for i in range(DECODE_STEPS):
            llm.eval([200 + i])
        return DECODE_STEPS / (time.perf_counter() - start)

    prompt_tps()
    decode_tps()
    decode, pp = [], []
    for r in range(repeats):
        decode.append(decode_tps())
        pp.append(prompt_tps())
        load = Path("/proc/loadavg").read_text().strip()
        print(f"llama.cpp repeat {r}: decode {decode[-1]:.1f}, prompt {pp[-1]:.1f} tokens/s (load {load})", file=sys.stderr)
    out = {
        "llama_cpp_python": llama_cpp.__version__,
        "system_info": llama_cpp.llama_print_system_info().decode(),
        "threads": threads,
        "repeats": repeats,
        "gguf_bytes": gguf_file.stat().st_size,
        "decode_tps": statistics.median(decode),
        "prompt_tps": statistics.median(pp),
        "decode_all": decode,
        "rss_bytes": status("VmRSS"),
        "peak_rss_bytes": status("VmHWM"),
    }
    llm.close()
    print(json.dumps(out))


def table(probe_file, patchbay_file, llama_file):
    probe = json.loads(Path(probe_file).read_text())
    pb = json.loads(Path(patchbay_file).read_text())
    lc = json.loads(Path(llama_file).read_text())
    bw = probe["median_gbs"] * 1e9
    mib = 1 << 20

    def frac(tps, nbytes):
        return f"{tps * nbytes / 1e9:.1f} GB/s, {100 * tps * nbytes / bw:.0f}%"

    rows = [
        ("decode, batch 1", pb["decode_tps"], frac(pb["decode_tps"], pb["weight_bytes"]),
         lc["decode_tps"], frac(lc["decode_tps"], lc["gguf_bytes"])),
        ("prompt processing, 512 tokens", pb["prompt_tps"], frac(pb["prompt_tps"] / PROMPT, pb["weight_bytes"]),
         lc["prompt_tps"], frac(lc["prompt_tps"] / PROMPT, lc["gguf_bytes"])),
        ("batch 16, base", pb["batch16_base_tps"], frac(pb["batch16_base_tps"] / 16, pb["weight_bytes"]), None, None),
        ("batch 16, 16 adapters (rank 16, all 7)", pb["batch16_lora_tps"],
         frac(pb["batch16_lora_tps"] / 16, pb["weight_bytes"]), None, None),
    ]
    print(f"Bandwidth probe: {probe['median_gbs']:.1f} GB/s (median of {probe['passes']} read passes over "
          f"{probe['mib']} MiB, {probe['threads']} threads; best pass {probe['best_gbs']:.1f}; before the sides "
          f"{probe['before_gbs']:.1f}, after {probe['after_gbs']:.1f}, the higher taken)")
    print()
    print("| case | Patchbay, tokens/s | weight bytes read per second, share of the probe | llama.cpp, tokens/s "
          "| weight bytes read per second, share of the probe | Patchbay / llama.cpp |")
    print("|---|---|---|---|---|---|")
    for name, p, pf, l, lf in rows:
        ratio = f"{p / l:.2f}x" if l else ""
        print(f"| {name} | {p:.1f} | {pf} | {f'{l:.1f}' if l else '-'} | {lf or '-'} | {ratio} |")
    print()
    print(f"Batch 16 with 16 adapters / batch 1: {pb['batch16_lora_tps'] / pb['decode_tps']:.2f}x; "
          f"LoRA cost at batch 16 (all 7): {100 * (pb['batch16_base_tps'] / pb['batch16_lora_tps'] - 1):.1f}%")
    print("LoRA cost at batch 16, 16 adapters on one projection: " + ", ".join(
        f"{p} {100 * (pb['batch16_base_tps'] / t - 1):+.1f}%" for p, t in pb["batch16_one_projection_tps"].items()))
    print(f"Resident memory: Patchbay {pb['rss_bytes'] / mib:.0f} MiB (peak {pb['peak_rss_bytes'] / mib:.0f}), "
          f"llama.cpp {lc['rss_bytes'] / mib:.0f} MiB (peak {lc['peak_rss_bytes'] / mib:.0f}); weights: Patchbay "
          f"{pb['weight_bytes'] / mib:.1f} MiB, GGUF file {lc['gguf_bytes'] / mib:.1f} MiB")
    print(f"Decode repeats, tokens/s: Patchbay {' '.join(f'{x:.1f}' for x in pb['decode_all'])}; "
          f"llama.cpp {' '.join(f'{x:.1f}' for x in lc['decode_all'])}")


if __name__ == "__main__":
    if sys.argv[1] == "measure":
        measure(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
