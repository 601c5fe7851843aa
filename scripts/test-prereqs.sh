#!/usr/bin/env bash
# Installs what the test suite needs that Maven does not bring: promtool and the Prometheus server
# (Debian's `prometheus` package) for the exposition tests, and Python's prometheus_client (Debian's
# `python3-prometheus-client`), whose strict parser checks the OpenMetrics page. Safe to run again.
set -euo pipefail
have_python_client() { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null; }
if command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 && have_python_client; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
  echo "test-prereqs: promtool/prometheus missing and not root; install Debian's 'prometheus' package" >&2
  exit 0
fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "test-prereqs: installing Debian's prometheus and python3-prometheus-client packages..." >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
# The package's post-install starts a service on a normal system; here we only need the binaries.
$SUDO apt-get install -y -qq --no-install-recommends prometheus python3-prometheus-client >/dev/null
