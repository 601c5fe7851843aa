#!/usr/bin/env bash
# llama.cpp beside Patchbay's CPU executor.
#
#   scripts/llama-cpp.sh [install]
#       A virtual environment .patchbay/llama-venv holding exactly scripts/llama-cpp-requirements.txt: llama-cpp-python
#       (its llama.cpp built from the sdist's source, CPU only, with -march=native and OpenMP) and gguf, the package
#       llama.cpp writes GGUF files with. Its interpreter is linked as .patchbay/bin/llama-cpp-python, where
#       LlamaCppDifferentialTest finds it. Skipped when the pinned versions are in place; the first build takes
#       several minutes on 2 cores. The built wheel is not cached, since -march=native binds it to this CPU.
#
#   scripts/llama-cpp.sh bench [THREADS] [REPEATS]     (defaults: 2 threads, 5 repeats)
#       One run, side by side with the same thread count: a memory bandwidth probe (C, compiled here with
#       gcc -O3 -march=native -fopenmp), Patchbay's executor (model module's CpuBenchMain) and llama.cpp
#       (model/src/test/python/llama_cpp_bench.py) on the same generated SmolLM2-135M-shaped BF16 model, then the
#       probe again; prints the table of docs/model.md. The model is written once to $TMPDIR/patchbay-llama-cpp-bench.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dot="$here/.patchbay"
venv="$dot/llama-venv"
req="$here/scripts/llama-cpp-requirements.txt"

install() {
  mkdir -p "$dot/bin"
  if ! { [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/.installed-requirements"; }; then
    local py; py="$(command -v python3 || true)"
    [ -n "$py" ] || { echo "llama-cpp: python3 (3.10 or newer) is needed" >&2; return 1; }
    for tool in cmake g++; do
      if ! command -v "$tool" >/dev/null 2>&1; then
        if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
          DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends cmake g++ >/dev/null
        else
          echo "llama-cpp: $tool is needed to build llama.cpp (Debian: cmake g++)" >&2; return 1
        fi
      fi
    done
    echo "llama-cpp: creating $venv, building llama-cpp-python from source (several minutes)..." >&2
    rm -rf "$venv"
    "$py" -m venv "$venv" || { echo "llama-cpp: '$py -m venv' failed; install python3-venv" >&2; return 1; }
    # CPU only: every GPU backend off; native instructions (AVX-512 where the CPU has it), as a local build of
    # llama.cpp would be.
    CMAKE_ARGS="-DGGML_NATIVE=ON -DGGML_OPENMP=ON -DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DLLAVA_BUILD=OFF" \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
      "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-input --no-cache-dir \
        --no-binary llama-cpp-python -r "$req"
    cp "$req" "$venv/.installed-requirements"
  fi
  # A script, not a link: Python finds its virtual environment from the path it was started by.
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$venv/bin/python" >"$dot/bin/llama-cpp-python.tmp"
  chmod +x "$dot/bin/llama-cpp-python.tmp"
  mv -fT "$dot/bin/llama-cpp-python.tmp" "$dot/bin/llama-cpp-python"
}

# probe THREADS OUT.json: read bandwidth over a 256 MiB array, every thread summing its own share.
probe() {
  local threads="$1" out="$2" src="$work/bandwidth.c"
  cat >"$src" <<'EOF'
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return (x > y) - (x < y); }
int main(int argc, char **argv) {
  size_t n = (size_t)256 << 20 >> 2; /* 256 MiB of floats */
  int passes = 20;
  float *a = aligned_alloc(64, n * sizeof(float));
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) a[i] = (float)(i & 1023); /* first touch by the thread that reads it */
  double gbs[64], sink = 0;
  for (int p = 0; p < passes; p++) {
    double t0 = omp_get_wtime(), total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
    for (size_t i = 0; i < n; i++) total += a[i];
    gbs[p] = n * sizeof(float) / (omp_get_wtime() - t0) / 1e9;
    sink += total;
  }
  qsort(gbs, passes, sizeof(double), cmp);
  printf("{\"threads\": %d, \"mib\": 256, \"passes\": %d, \"median_gbs\": %.2f, \"best_gbs\": %.2f, \"sink\": %.0f}\n",
         omp_get_max_threads(), passes, (gbs[passes / 2 - 1] + gbs[passes / 2]) / 2, gbs[passes - 1], sink);
  return 0;
}
EOF
  gcc -O3 -march=native -ffast-math -fopenmp -o "$work/bandwidth" "$src"
  OMP_NUM_THREADS="$threads" OMP_PROC_BIND=spread "$work/bandwidth" >"$out"
  echo "bandwidth probe: $(cat "$out")" >&2
}

bench() {
  local threads="${1:-2}" repeats="${2:-5}"
  install
  work="${TMPDIR:-/tmp}/patchbay-llama-cpp-bench"
  mkdir -p "$work"
  export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
  echo "llama-cpp bench: building the model module's test classes..." >&2
  (cd "$here" && mvn -B -ntp -q -pl model -am test-compile dependency:build-classpath \
    -Dmdep.outputFile="$work/classpath.txt" -Dmdep.includeScope=test >&2)
  local cp="$here/model/target/test-classes:$here/model/target/classes:$(cat "$work/classpath.txt")"
  local model="$work/smollm2-135m-bf16"
  echo "load before: $(uptime)" >&2
  probe "$threads" "$work/probe-before.json"
  "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector -XX:+UseZGC -Xmx2g -cp "$cp" \
    dev.patchbay.model.CpuBenchMain "$model" "$threads" "$repeats" | tail -1 >"$work/patchbay.json"
  "$venv/bin/python" "$here/model/src/test/python/llama_cpp_bench.py" measure "$model" "$work/gguf" "$threads" \
    "$repeats" | tail -1 >"$work/llama-cpp.json"
  probe "$threads" "$work/probe-after.json"
  echo "load after: $(uptime)" >&2
  # Shares are taken of the higher of the two probes, the most bandwidth seen in the run (the lower share); both
  # are printed.
  "$venv/bin/python" - "$work" <<'EOF'
import json, sys
w = sys.argv[1]
a, b = (json.load(open(f"{w}/probe-{x}.json")) for x in ("before", "after"))
best = dict(max(a, b, key=lambda p: p["median_gbs"]), before_gbs=a["median_gbs"], after_gbs=b["median_gbs"])
json.dump(best, open(f"{w}/probe.json", "w"))
EOF
  echo "uptime: $(uptime)"
  "$venv/bin/python" "$here/model/src/test/python/llama_cpp_bench.py" table "$work/probe.json" "$work/patchbay.json" \
    "$work/llama-cpp.json"
}

case "${1:-install}" in
  install) install ;;
  bench) shift; bench "$@" ;;
  *) echo "usage: scripts/llama-cpp.sh [install | bench [threads] [repeats]]" >&2; exit 2 ;;
esac
