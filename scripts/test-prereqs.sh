#!/usr/bin/env bash
# Installs what the test suite needs that Maven does not bring: promtool and the Prometheus server
# (Debian's `prometheus` package) for the exposition tests, Python's prometheus_client (Debian's
# `python3-prometheus-client`), whose strict parser checks the OpenMetrics page, and the pinned OpenAI SDK
# for Node (`npm ci` in server/src/test/node) that the SDK test drives. Safe to run again.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
can_install() { [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; }
apt_updated=""
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$apt_updated" ]; then $SUDO apt-get update -qq >/dev/null; apt_updated=1; fi
  # A package's post-install may start a service on a normal system; here only the binaries are needed.
  $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

have_python_client() { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null; }
if ! { command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 && have_python_client; }; then
  if can_install; then
    echo "test-prereqs: installing Debian's prometheus and python3-prometheus-client packages..." >&2
    apt_install prometheus python3-prometheus-client
  else
    echo "test-prereqs: promtool/prometheus missing and not root; install Debian's 'prometheus' package" >&2
  fi
fi

if ! command -v npm >/dev/null 2>&1; then
  if can_install; then
    echo "test-prereqs: installing Debian's nodejs and npm packages..." >&2
    apt_install nodejs npm
  else
    echo "test-prereqs: node/npm missing and not root; install Node.js for the OpenAI SDK test" >&2
  fi
fi
sdk="$here/server/src/test/node"
# npm ci reinstalls from scratch; skip it while the installed tree is newer than the lock file.
if command -v npm >/dev/null 2>&1 && ! [ "$sdk/node_modules/.package-lock.json" -nt "$sdk/package-lock.json" ]; then
  echo "test-prereqs: installing the pinned OpenAI SDK (npm ci in server/src/test/node)..." >&2
  (cd "$sdk" && npm ci --no-audit --no-fund >/dev/null)
fi
