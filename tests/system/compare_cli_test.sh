#!/bin/sh
# `recompdiag compare` end to end: exit codes a CI gates on, and every bad input named on stderr.
# Usage: compare_cli_test.sh RECOMPDIAG_BINARY FIXTURES_DIR
set -u
bin=$1
fx=$2
. "$(dirname "$0")/check_lib.sh"

# expect CODE STDERR_PATTERN ARGS...: runs compare with ARGS, checks the exit code and that stderr
# matches the pattern (grep -E; empty matches anything).
expect() {
  code=$1
  pattern=$2
  shift 2
  "$bin" compare "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  [ "$got" -eq "$code" ] || fail "compare $*: exit $got, expected $code; stderr: $(cat "$tmp/err")"
  if [ -n "$pattern" ] && ! grep -Eq -e "$pattern" "$tmp/err"; then
    fail "compare $*: stderr does not match '$pattern': $(cat "$tmp/err")"
  fi
}

base=$fx/compare_baseline.jsonl
# One independent run per side and no measured run-to-run spread: no time verdict, exit 0 with a
# warning that says what would settle it.
expect 0 "warning: inconclusive: .*no measured run-to-run spread" "$base" "$fx/compare_slower.jsonl"
# A noise profile of 3% (what `bench noise` writes): one run per side cannot prove a change under
# 5%; the synthetic fixtures have no spread between runs, and with none given the rerun is proven
# equivalent.
noise=$tmp/noise.json
printf '{"type":"noise_profile","schema":1,"run_noise":0.03,"degrees_of_freedom":9,"runs":10,"host":"h"}\n' >"$noise"
expect 0 "warning: inconclusive: .*runs per side would settle it" "$base" "$fx/compare_rerun.jsonl" \
  --noise-profile "$noise"
grep -q '\*\*inconclusive\*\*' "$tmp/out" || fail "rerun: Markdown does not say inconclusive"
grep -q 'noise profile .*noise.json: 10 runs on h' "$tmp/out" || fail "rerun: the noise profile is not named"
expect 1 "" "$base" "$fx/compare_rerun.jsonl" --noise-profile "$noise" --strict-inconclusive
expect 0 "" "$base" "$fx/compare_rerun.jsonl" --run-noise 0
grep -q '\*\*no change\*\*' "$tmp/out" || fail "rerun: Markdown does not say no change"
expect 1 "" "$base" "$fx/compare_slower.jsonl" --noise-profile "$noise"
grep -q '\*\*regression\*\*' "$tmp/out" || fail "slower: Markdown does not say regression"
expect 0 "" "$base" "$fx/compare_faster.jsonl" --noise-profile "$noise"
grep -q '\*\*improvement\*\*' "$tmp/out" || fail "faster: Markdown does not say improvement"
expect 2 "give --run-noise or --noise-profile, not both" "$base" "$fx/compare_slower.jsonl" \
  --noise-profile "$noise" --run-noise 3
expect 2 "missing.json: cannot open the noise profile" "$base" "$fx/compare_slower.jsonl" \
  --noise-profile "$tmp/missing.json"
expect 2 "compare_baseline.jsonl: not a noise profile|not JSON" "$base" "$fx/compare_slower.jsonl" \
  --noise-profile "$base"
# A wide threshold makes 30% noise; a tiny alpha makes nothing significant.
expect 0 "" "$base" "$fx/compare_slower.jsonl" --noise-profile "$noise" --threshold 50
expect 0 "" "$base" "$fx/compare_slower.jsonl" --noise-profile "$noise" --alpha 1e-300

# Every format, to a file, written atomically, plus the trace.
expect 1 "wrote $tmp/r.html" "$base" "$fx/compare_slower.jsonl" --noise-profile "$noise" --format html --out "$tmp/r.html" \
  --trace "$tmp/trace.json"
head -c 15 "$tmp/r.html" | grep -q '<!DOCTYPE html>' || fail "html report does not start with a doctype"
expect 1 "" "$base" "$fx/compare_slower.jsonl" --noise-profile "$noise" --format json --out "$tmp/r.json"
if command -v python3 >/dev/null; then
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['verdict']=='regression'" \
    "$tmp/r.json" || fail "json report is not valid JSON with verdict regression"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['traceEvents'])>400" \
    "$tmp/trace.json" || fail "trace is not valid JSON with the steps"
fi
# Without --format, the --out extension picks it.
expect 1 "" "$base" "$fx/compare_slower.jsonl" --noise-profile "$noise" --out "$tmp/auto.html"
head -c 15 "$tmp/auto.html" | grep -q '<!DOCTYPE html>' || fail "--out x.html did not write HTML"
expect 1 "" "$base" "$fx/compare_slower.jsonl" --noise-profile "$noise" --out "$tmp/auto.json"
head -c 1 "$tmp/auto.json" | grep -q '{' || fail "--out x.json did not write JSON"
ls "$tmp" | grep -q '\.tmp\.' && fail "a temporary report file was left behind"

# Bad input: exit 2 and a message naming the file (and line where there is one).
expect 2 "missing.jsonl: cannot open run file" "$tmp/missing.jsonl" "$base"
: >"$tmp/empty.jsonl"
expect 2 "empty.jsonl: empty file" "$base" "$tmp/empty.jsonl"
printf 'step,wall_ms\n0,1.5\n' >"$tmp/table.csv"
expect 2 "table.csv:1: " "$tmp/table.csv" "$base"
sed '1s/"schema":1/"schema":99/' "$base" >"$tmp/v99.jsonl"
expect 2 "v99.jsonl:1: unknown schema version 99" "$base" "$tmp/v99.jsonl"
sed '10s/"wall_ms":[0-9.e+-]*/"wall_ms":null/' "$base" >"$tmp/nan.jsonl"
expect 2 "nan.jsonl:10: step [0-9]+ has a NaN" "$base" "$tmp/nan.jsonl"
sed '10s/"wall_ms":/"wall_ms":-/' "$base" >"$tmp/neg.jsonl"
expect 2 "neg.jsonl:10: step [0-9]+ has a negative wall time" "$base" "$tmp/neg.jsonl"
grep -v '"phase":2' "$base" >"$tmp/phase1.jsonl"
expect 2 "phase1.jsonl: no steps in phase 2" "$base" "$tmp/phase1.jsonl"
expect 2 "the same file as" "$base" "$base"
expect 2 "unknown report format 'pdf'" "$base" "$fx/compare_rerun.jsonl" --format pdf
expect 2 "--threshold must be" "$base" "$fx/compare_rerun.jsonl" --threshold -1
expect 2 "cannot write .*no/such/dir/r.md" "$base" "$fx/compare_rerun.jsonl" --out "$tmp/no/such/dir/r.md"

# A truncated last line (a run killed mid-write) is accepted with a warning.
head -n 150 "$fx/compare_slower.jsonl" >"$tmp/cut.jsonl"
sed -n 151p "$fx/compare_slower.jsonl" | head -c 100 >>"$tmp/cut.jsonl"
expect 0 "warning: .*cut.jsonl:151: truncated last line" "$base" "$tmp/cut.jsonl" --threshold 50

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "compare CLI: all checks passed"
