#!/usr/bin/env bash
# Load benchmark of live metrics on a real training run (issue 5): the same `recompdiag train`
# three times -- exporter off, exporter on, exporter on with 100 concurrent scrapers on loopback
# for 20 s -- and the step-time change read from the run files. Bounded in time, loopback only.
#
# usage: prometheus_load.sh PROMETHEUS_BENCH RECOMPDIAG_BIN [TRAIN_ARGS...]
#   e.g. prometheus_load.sh build/tests/prometheus_bench build/recompdiag --epochs 40,20
# Pick TRAIN_ARGS so one run lasts at least 20 s; the script appends --quiet, --out and the
# metrics flags. Env: SCRAPERS (100), SCRAPE_SECONDS (20), SCRAPE_INTERVAL_MS (1000; 0 = back to
# back), RUN_TIMEOUT (600 s per run).
set -euo pipefail
bench=${1:?usage: $0 PROMETHEUS_BENCH RECOMPDIAG_BIN [TRAIN_ARGS...]}
bin=${2:?usage: $0 PROMETHEUS_BENCH RECOMPDIAG_BIN [TRAIN_ARGS...]}
shift 2
scrapers=${SCRAPERS:-100}
scrape_seconds=${SCRAPE_SECONDS:-20}
interval_ms=${SCRAPE_INTERVAL_MS:-1000}
run_timeout=${RUN_TIMEOUT:-600}
command -v jq >/dev/null || { echo "SKIP: jq not found"; exit 77; }

tmp=$(mktemp -d)
train_pid=""
cleanup() {
  [ -n "$train_pid" ] && kill "$train_pid" 2>/dev/null && wait "$train_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

source "$(dirname "$0")/free_port.sh"

# mean and median wall_ms of the step records of a run file; steps of the first 10% dropped
# (compile and warm-up).
step_stats() {
  jq -s -r '[.[] | select(.type == "step") | .wall_ms] | .[(length / 10 | floor):] | sort
    | "\(add / length) \(.[length / 2 | floor]) \(length)"' "$1"
}

echo "== exporter off"
timeout "$run_timeout" "$bin" train "$@" --quiet --out "$tmp/off.jsonl" >/dev/null
read -r off_mean off_p50 off_n < <(step_stats "$tmp/off.jsonl")

echo "== exporter on, not scraped"
port=$(free_port)
timeout "$run_timeout" "$bin" train "$@" --quiet --out "$tmp/on.jsonl" \
  --metrics-addr "127.0.0.1:$port" >/dev/null
read -r on_mean on_p50 on_n < <(step_stats "$tmp/on.jsonl")

echo "== exporter on, $scrapers scrapers every ${interval_ms} ms for ${scrape_seconds} s"
port=$(free_port)
timeout "$run_timeout" "$bin" train "$@" --quiet --out "$tmp/scraped.jsonl" \
  --metrics-addr "127.0.0.1:$port" --metrics-hold "$((scrape_seconds + 5))" >/dev/null &
train_pid=$!
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/metrics" >/dev/null 2>&1 && break
  sleep 0.1
done
train_start=$SECONDS
"$bench" --target-port "$port" --scrapers "$scrapers" --seconds "$scrape_seconds" \
  --scrape-interval-ms "$interval_ms"
# The run may outlast the scrapers: wait for it (its hold ends soon after).
kill_at=$((SECONDS + run_timeout))
while kill -0 "$train_pid" 2>/dev/null && [ $SECONDS -lt $kill_at ]; do
  [ -s "$tmp/scraped.jsonl" ] && grep -q '"type":"summary"' "$tmp/scraped.jsonl" && break
  sleep 0.5
done
kill "$train_pid" 2>/dev/null || true  # ends the hold
wait "$train_pid" 2>/dev/null || true
train_pid=""
read -r sc_mean sc_p50 sc_n < <(step_stats "$tmp/scraped.jsonl")
elapsed=$(jq -s -r '[.[] | select(.type == "summary") | .elapsed_s][0] // "?"' "$tmp/scraped.jsonl")

awk -v a="$off_mean" -v b="$off_p50" -v n="$off_n" \
    -v c="$on_mean" -v d="$on_p50" -v m="$on_n" \
    -v e="$sc_mean" -v f="$sc_p50" -v k="$sc_n" -v el="$elapsed" -v s="$scrape_seconds" 'BEGIN {
  printf "step time, exporter off:       mean %.3f ms, p50 %.3f ms (%d steps)\n", a, b, n
  printf "step time, exporter on:        mean %.3f ms, p50 %.3f ms (%d steps): %+.1f%% / %+.1f%% vs off\n", c, d, m, (c / a - 1) * 100, (d / b - 1) * 100
  printf "step time, on + scrapers:      mean %.3f ms, p50 %.3f ms (%d steps): %+.1f%% / %+.1f%% vs on (run %s s, scraped %s s)\n", e, f, k, (e / c - 1) * 100, (f / d - 1) * 100, el, s
}'
