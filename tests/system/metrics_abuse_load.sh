#!/usr/bin/env bash
# Step times of a real training run while its metrics endpoint is abused (issue 10): the same
# `recompdiag train` with the exporter on, first left alone, then under tests/metrics_abuse
# (malformed requests, held connections, slow clients) from the moment it serves; pairs repeated
# PAIRS times in turn, so a machine that drifts affects both alike. Prints the steady-state step
# times (the first 10% of steps dropped) read from the run files. Figures only: nothing asserted.
#
# usage: metrics_abuse_load.sh RECOMPDIAG ABUSE_BIN [TRAIN_ARGS...]
#   e.g. metrics_abuse_load.sh build/recompdiag build/tests/metrics_abuse --epochs 60,20
# Pick TRAIN_ARGS so that a run outlasts the abuse (about 3 x ABUSE_SECONDS + 5 s). Env: PAIRS
# (2), ABUSE_HELD (1000), ABUSE_SLOW (200), ABUSE_SECONDS (12). Loopback only; each run is as long
# as TRAIN_ARGS make it.
set -euo pipefail
bin=${1:?usage: $0 RECOMPDIAG ABUSE_BIN [TRAIN_ARGS...]}
abuse=${2:?usage: $0 RECOMPDIAG ABUSE_BIN [TRAIN_ARGS...]}
shift 2
command -v jq >/dev/null || { echo "SKIP: jq not found"; exit 77; }
ulimit -n 4096 2>/dev/null || true
tmp=$(mktemp -d)
train_pid=""
cleanup() {
  [ -n "$train_pid" ] && kill "$train_pid" 2>/dev/null && wait "$train_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
source "$(dirname "$0")/free_port.sh"

train_args=("$@")
pairs=${PAIRS:-2}

# step_stats FILE...: mean and median wall_ms of the steps of the run files, the first 10% of
# each run's steps dropped (compile and warm-up).
step_stats() {
  jq -s -r '[.[] | select(.type == "step") | .wall_ms] | .[(length / 10 | floor):]' "$@" |
    jq -s -r 'add | sort | "\(add / length) \(.[length / 2 | floor]) \(length)"'
}

# run NAME ABUSE(0|1): one training run with the exporter on; with ABUSE=1 the abuse starts as
# soon as the endpoint answers and goes on while the run trains.
run() {
  local name=$1 with_abuse=$2 port
  port=$(free_port)
  "$bin" train "${train_args[@]}" --quiet --out "$tmp/$name.jsonl" \
    --metrics-addr "127.0.0.1:$port" >/dev/null &
  train_pid=$!
  if [ "$with_abuse" = 1 ]; then
    for _ in $(seq 1 300); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.1
    done
    "$abuse" --port "$port" --pid "$train_pid" --held "${ABUSE_HELD:-1000}" \
      --slow "${ABUSE_SLOW:-200}" --seconds "${ABUSE_SECONDS:-12}" | grep -v '^  ' || true
    if grep -q '"type":"summary"' "$tmp/$name.jsonl"; then
      echo "warning: $name ended before the abuse did; lengthen TRAIN_ARGS" >&2
    fi
  fi
  wait "$train_pid"
  train_pid=""
}

alone=() abused=()
for ((i = 1; i <= pairs; i++)); do
  echo "== pair $i: exporter on, alone"
  run "alone$i" 0
  alone+=("$tmp/alone$i.jsonl")
  echo "== pair $i: exporter on, abused"
  run "abused$i" 1
  abused+=("$tmp/abused$i.jsonl")
done
read -r a_mean a_p50 a_n < <(step_stats "${alone[@]}")
read -r b_mean b_p50 b_n < <(step_stats "${abused[@]}")
awk -v a="$a_mean" -v b="$a_p50" -v n="$a_n" -v c="$b_mean" -v d="$b_p50" -v m="$b_n" 'BEGIN {
  printf "step time, exporter alone:  mean %.3f ms, p50 %.3f ms (%d steps)\n", a, b, n
  printf "step time, endpoint abused: mean %.3f ms, p50 %.3f ms (%d steps): %+.1f%% / %+.1f%%\n", c, d, m, (c / a - 1) * 100, (d / b - 1) * 100
}'
