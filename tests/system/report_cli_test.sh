#!/bin/sh
# `recompdiag report` end to end: one run's report (Markdown on stdout, --html and --json files),
# one job's, and every bad input with one line on stderr and exit 2.
# Usage: report_cli_test.sh RECOMPDIAG_BINARY FIXTURES_DIR
set -u
bin=$1
fx=$2
. "$(dirname "$0")/check_lib.sh"

# expect CODE STDERR_PATTERN ARGS...: runs report with ARGS, checks the exit code, that stderr
# matches the pattern (grep -E; empty matches anything) and, for exit 2, that it is one line.
expect() {
  code=$1
  pattern=$2
  shift 2
  "$bin" report "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  [ "$got" -eq "$code" ] || fail "report $*: exit $got, expected $code; stderr: $(cat "$tmp/err")"
  if [ -n "$pattern" ] && ! grep -Eq -e "$pattern" "$tmp/err"; then
    fail "report $*: stderr does not match '$pattern': $(cat "$tmp/err")"
  fi
  if [ "$code" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
    fail "report $*: stderr is not one line: $(cat "$tmp/err")"
  fi
}

base=$fx/compare_baseline.jsonl
expect 0 "" "$base" --html "$tmp/r.html" --json "$tmp/r.json"
grep -q '^### recompdiag report: `compare_baseline.jsonl` (recompile) · ' "$tmp/out" ||
  fail "report: Markdown headline: $(head -1 "$tmp/out")"
grep -q 'TorchScript compiled' "$tmp/out" || fail "report: the run's compiles are not named"
grep -q '^<!DOCTYPE html>' "$tmp/r.html" || fail "report --html wrote no page"
grep -q '"kind": "recompdiag.report"' "$tmp/r.json" || fail "report --json wrote no report"
expect 0 "" "$base" --json -
grep -q '"kind": "recompdiag.report"' "$tmp/out" || fail "report --json - printed no JSON"
# A run killed in its last line is a run: reported, with a warning.
head -c 5000 "$base" >"$tmp/killed.jsonl"
expect 0 "warning: .*truncated last line" "$tmp/killed.jsonl"

# Bad input: one line, exit 2.
expect 2 "RUN is required"
printf '{"foo": 1}\n' >"$tmp/other.jsonl"
expect 2 'other.jsonl:1: no "type" field' "$tmp/other.jsonl"
head -c 300 "$base" >"$tmp/cut.jsonl"
expect 2 "cut.jsonl:1: not valid JSON" "$tmp/cut.jsonl"
: >"$tmp/empty.jsonl"
expect 2 "empty.jsonl: empty file, not a recompdiag run file" "$tmp/empty.jsonl"
expect 2 "nope.jsonl: cannot open run file" "$tmp/nope.jsonl"
expect 2 "a report is of one run or one job's rank files; 2 runs were given" "$base" \
  "$fx/compare_slower.jsonl"
expect 2 "--html: cannot write" "$base" --html "$tmp"
mkdir "$tmp/none"
expect 2 "no .*jsonl|matched no" "$tmp/none"
# A job with a missing rank: ranks 0 and 2 of 3.
for r in 0 2; do
  sed "1s/\"host\":/\"rank\":$r,\"world_size\":3,\"job_id\":\"j1\",\"host\":/" "$base" \
    >"$tmp/job.rank$r.jsonl"
done
expect 2 "job j1 has 3 ranks but rank\(s\) 1 are not given" "$tmp/job.rank0.jsonl" "$tmp/job.rank2.jsonl"
# The whole job: its three ranks, one report with the per-rank table.
sed "1s/\"host\":/\"rank\":1,\"world_size\":3,\"job_id\":\"j1\",\"host\":/" "$base" >"$tmp/job.rank1.jsonl"
expect 0 "" "$tmp/job.rank0.jsonl" "$tmp/job.rank1.jsonl" "$tmp/job.rank2.jsonl"
grep -q 'job j1' "$tmp/out" || fail "report of a job: the job is not named: $(head -3 "$tmp/out")"

[ "$failures" -eq 0 ] && echo "report CLI: all checks passed"
[ "$failures" -eq 0 ]
