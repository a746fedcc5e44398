#!/usr/bin/env bash
# `promtool check metrics` on one scrape of the exporter's /metrics (issue 5).
# usage: promtool_check_metrics.sh METRICS_DRIVER
# Exits 77 (CTest: skipped) when promtool is not installed.
set -euo pipefail
driver=${1:?usage: $0 METRICS_DRIVER}
if ! command -v promtool >/dev/null 2>&1; then
  echo "SKIP: promtool not found (apt-get install prometheus)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout 60 "$driver" --metrics-addr 127.0.0.1:0 --seconds 1 --step-ms 2 --scrape-to "$tmp/metrics.txt"
echo "scraped $(grep -c -v '^#' "$tmp/metrics.txt") samples"
# promtool prints lint problems and exits non-zero when there are any.
promtool check metrics < "$tmp/metrics.txt"
echo "promtool check metrics: OK"
