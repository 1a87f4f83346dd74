#!/usr/bin/env bash
# Makes the Prometheus Operator's PrometheusRule from deploy/alerts/rules.yml, the one
# source of hrsync's alert rules: the same groups, comments and all, under `spec`.
#
#   bash deploy/alerts/prometheusrule.sh [OUT]   # default: deploy/kubernetes/base/prometheusrule.yaml
#
# Run it after changing rules.yml; tests/deploy/test_alerts.py fails while they differ.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../kubernetes/base/prometheusrule.yaml}
{
  cat <<'HEADER'
# Made from deploy/alerts/rules.yml by deploy/alerts/prometheusrule.sh: change that file
# and run the script, not this file. If your Prometheus selects rules by a label
# (e.g. release: prometheus), add it from your overlay.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: hrsync
  labels:
    app.kubernetes.io/name: hrsync
spec:
HEADER
  # From `groups:` on (the file's own header comment stays there), indented under spec;
  # empty lines stay empty.
  sed -n '/^groups:/,$p' "$here/rules.yml" | sed '/./s/^/  /'
} > "$out"
