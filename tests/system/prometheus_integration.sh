#!/usr/bin/env bash
# Integration test of live metrics (issue 5): a real Prometheus server scrapes a metrics source,
# then every PromQL expression of the Grafana dashboard must return data through the HTTP API.
#
# usage: prometheus_integration.sh DASHBOARD_JSON SOURCE_COMMAND [ARGS...]
#
# SOURCE_COMMAND is run with "--metrics-addr 127.0.0.1:PORT --metrics-hold HOLD" appended: the
# metrics_driver test program, or a real run such as `recompdiag train ...` once the CLI has the
# flags. The script starts and stops everything itself (temp config, temp storage, loopback ports)
# and is bounded: RECOMPDIAG_IT_RUN_TIMEOUT (default 180) seconds for the source's run.
# Exits 77 (CTest: skipped) when prometheus, curl or jq is missing.
set -euo pipefail

dashboard=${1:?usage: $0 DASHBOARD_JSON SOURCE_COMMAND [ARGS...]}
shift
[ $# -ge 1 ] || { echo "usage: $0 DASHBOARD_JSON SOURCE_COMMAND [ARGS...]" >&2; exit 2; }
run_timeout=${RECOMPDIAG_IT_RUN_TIMEOUT:-180}
hold=60  # the source keeps serving while the queries run; stopped by us before that

for tool in prometheus curl jq timeout; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool not found (apt-get install prometheus curl jq)"
    exit 77
  fi
done

# A source without the flags (e.g. a CLI not yet wired) is skipped, not failed.
if ! "$@" --help 2>/dev/null | grep -q -- --metrics-addr; then
  echo "SKIP: '$*' has no --metrics-addr flag"
  exit 77
fi

tmp=$(mktemp -d)
source_pid=""
prom_pid=""
cleanup() {
  # Our own children only, by pid.
  [ -n "$source_pid" ] && kill "$source_pid" 2>/dev/null && wait "$source_pid" 2>/dev/null || true
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

source "$(dirname "$0")/free_port.sh"

exporter_port=$(free_port)

# Poll `what` (a shell command) every 0.5 s for at most `secs` seconds.
wait_for() {
  local secs=$1 what=$2
  local deadline=$((SECONDS + secs))
  until eval "$what" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then return 1; fi
    sleep 0.5
  done
}

# Starts Prometheus on a fresh free port, scraping the exporter's port. A port free when picked
# can be taken before Prometheus binds it (a test running beside this one): then another port,
# at most 5 tries. Sets prom_port, prom and prom_pid.
start_prometheus() {
  local try
  for try in 1 2 3 4 5; do
    prom_port=$(free_port)
    while [ "$prom_port" = "$exporter_port" ]; do prom_port=$(free_port); done
    prom="http://127.0.0.1:$prom_port"
    printf '%s\n' 'global:' '  scrape_interval: 250ms' '  scrape_timeout: 250ms' \
      '  evaluation_interval: 1s' 'scrape_configs:' '  - job_name: recompdiag' \
      '    static_configs:' "      - targets: ['127.0.0.1:$exporter_port']" >"$tmp/prometheus.yml"

    prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
      --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$tmp/prometheus.log" 2>&1 &
    prom_pid=$!
    # Ready, or exited (a failed bind ends Prometheus at once).
    wait_for 30 "curl -sf $prom/-/ready || ! kill -0 $prom_pid" || true
    if curl -sf "$prom/-/ready" >/dev/null 2>&1; then return 0; fi
    kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null || true
    prom_pid=""
    grep -q 'address already in use' "$tmp/prometheus.log" || break
    echo "port $prom_port was taken before prometheus bound it (try $try): another port"
  done
  return 1
}

if ! start_prometheus; then
  echo "FAIL: prometheus did not become ready in 30 s" >&2
  cat "$tmp/prometheus.log" >&2
  exit 1
fi
echo "prometheus ready on $prom"

"$@" --metrics-addr "127.0.0.1:$exporter_port" --metrics-hold "$hold" >"$tmp/source.log" 2>&1 &
source_pid=$!
echo "metrics source: $* --metrics-addr 127.0.0.1:$exporter_port --metrics-hold $hold (pid $source_pid)"

# Instant query; prints the result array.
query() {
  curl -sf --max-time 10 "$prom/api/v1/query" --data-urlencode "query=$1" |
    jq -ce 'select(.status == "success") | .data.result'
}

# Wait until every run the source started has ended and its final values were scraped.
done_expr='(count(recompdiag_run_finished) > 0) unless (count(recompdiag_run_finished == 0) > 0)'
if ! wait_for "$run_timeout" "query '$done_expr' | jq -e 'length > 0'"; then
  echo "FAIL: the source's runs did not finish (and get scraped) within $run_timeout s" >&2
  tail -20 "$tmp/source.log" >&2
  query 'up' >&2 || true
  exit 1
fi
sleep 2  # one more scrape of the final values
echo "runs finished: $(query 'recompdiag_run_info' | jq -c '[.[].metric | {run, mode}]')"

# Every expression of the dashboard, with Grafana's variables replaced: all runs and modes.
mapfile -t exprs < <(
  jq -r '.. | objects | select(has("expr")) | .expr' "$dashboard"
  # Template variables: label_values(SELECTOR, label) is Grafana's; its selector is PromQL.
  jq -r '.templating.list[] | select(.type == "query") | .definition' "$dashboard" |
    sed -E 's/^label_values\((.*), *[a-zA-Z_]+\)$/\1/'
)
[ ${#exprs[@]} -gt 0 ] || { echo "FAIL: no expressions found in $dashboard" >&2; exit 1; }

failed=0
for raw in "${exprs[@]}"; do
  expr=${raw//\$__rate_interval/1m}
  expr=${expr//\$__interval/1m}
  expr=${expr//\$run/.+}
  expr=${expr//\$mode/.+}
  if ! result=$(query "$expr"); then
    echo "FAIL (query error): $expr" >&2
    curl -s "$prom/api/v1/query" --data-urlencode "query=$expr" | head -c 400 >&2
    echo >&2
    failed=$((failed + 1))
  elif [ "$(jq 'length' <<<"$result")" -eq 0 ]; then
    echo "FAIL (no data): $expr" >&2
    failed=$((failed + 1))
  else
    echo "ok ($(jq 'length' <<<"$result") series): $expr"
  fi
done

echo "${#exprs[@]} expressions, $failed without data"
[ "$failed" -eq 0 ]
