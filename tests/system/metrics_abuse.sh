#!/usr/bin/env bash
# The metrics endpoint under abuse (issue 10): starts a metrics source on a loopback port, points
# tests/metrics_abuse.cpp at it (malformed and oversized requests, held connections, slow
# clients, with scrapes throughout and the source's threads counted), then stops the source.
#
# usage: metrics_abuse.sh ABUSE_BIN MAX_THREADS SOURCE_COMMAND [ARGS...]
#
# SOURCE_COMMAND is run with "--metrics-addr 127.0.0.1:PORT --metrics-hold 600" appended (the
# metrics_driver test program, or `recompdiag train ...`): it keeps serving until stopped here.
# Env: ABUSE_HELD (1000), ABUSE_SLOW (200), ABUSE_SECONDS (12 per stage). Bounded: the source
# is stopped after the abuse, and CTest's timeout covers the rest.
set -euo pipefail
abuse=${1:?usage: $0 ABUSE_BIN MAX_THREADS SOURCE_COMMAND [ARGS...]}
max_threads=${2:?usage: $0 ABUSE_BIN MAX_THREADS SOURCE_COMMAND [ARGS...]}
shift 2
[ $# -ge 1 ] || { echo "usage: $0 ABUSE_BIN MAX_THREADS SOURCE_COMMAND [ARGS...]" >&2; exit 2; }

# The held connections need file descriptors on our side (the server caps its own).
ulimit -n 4096 2>/dev/null || true

source_pid=""
cleanup() {
  # Our own child only, by pid.
  [ -n "$source_pid" ] && kill "$source_pid" 2>/dev/null && wait "$source_pid" 2>/dev/null || true
}
trap cleanup EXIT

source "$(dirname "$0")/free_port.sh"
port=$(free_port)
"$@" --metrics-addr "127.0.0.1:$port" --metrics-hold 600 >/dev/null &
source_pid=$!
for _ in $(seq 1 300); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$source_pid" 2>/dev/null || { echo "the metrics source exited early" >&2; exit 1; }
  sleep 0.1
done

"$abuse" --port "$port" --pid "$source_pid" --max-threads "$max_threads" \
  --held "${ABUSE_HELD:-1000}" --slow "${ABUSE_SLOW:-200}" --seconds "${ABUSE_SECONDS:-12}"
