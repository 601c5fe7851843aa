#!/usr/bin/env bash
# Writes deploy/kubernetes/<way>.yaml: the Helm chart rendered with deploy/helm/patchbay/examples/<way>.yaml,
# release name "patchbay", namespace "default", and servicemonitors.yaml. Run it after changing the chart; the deploy tests check that
# the files are what the chart renders.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for way in single-server router-proxy gateway-picker; do
  {
    echo "# Patchbay, $way: rendered from deploy/helm/patchbay with examples/$way.yaml (deploy/render-manifests.sh)."
    echo "# Namespace \"default\"; for another, use the chart (helm install --namespace) or edit every namespace: field."
    helm template patchbay "$here/helm/patchbay" --namespace default -f "$here/helm/patchbay/examples/$way.yaml"
  } > "$here/kubernetes/$way.yaml"
done
# The Prometheus Operator's ServiceMonitors for the model servers and the router, to apply beside any of them.
{
  echo "# Patchbay ServiceMonitors (Prometheus Operator): rendered from deploy/helm/patchbay with"
  echo "# monitoring.prometheus.enabled=true (deploy/render-manifests.sh). Namespace \"default\"."
  helm template patchbay "$here/helm/patchbay" --namespace default --set monitoring.prometheus.enabled=true \
    --show-only templates/servicemonitor.yaml
} > "$here/kubernetes/servicemonitors.yaml"
