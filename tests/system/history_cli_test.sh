#!/bin/sh
# `recompdiag history` end to end on the built-in trainer: 14 commits of short runs, a recompile
# every epoch from commit 9 on (the recompile-storm fault). The check must name commit 9 and the
# compiles, with the cause, and no count change before it; an ack takes it off the gate; the HTML
# report draws it; every bad input gets one line and exit 2, and leaves the store as it was.
# Step times are not judged here (no timing assertions in tests): scripts/bench-history measures
# them (noise alone, 25% more work from commit 8).
# Usage: history_cli_test.sh RECOMPDIAG_BINARY OTAVA_PYTHON
set -u
bin=$1
export RECOMPDIAG_PYTHON=$2
. "$(dirname "$0")/check_lib.sh"
db=$tmp/history.db

# expect CODE STDERR_PATTERN ARGS...: runs the command, checks its exit code and that stderr
# matches the pattern (grep -E; empty: anything); for exit 2, that stderr is one line.
expect() {
  code=$1
  pattern=$2
  shift 2
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  [ "$got" -eq "$code" ] || fail "$*: exit $got, expected $code; stderr: $(cat "$tmp/err")"
  if [ -n "$pattern" ] && ! grep -Eq -e "$pattern" "$tmp/err"; then
    fail "$*: stderr does not match '$pattern': $(cat "$tmp/err")"
  fi
  if [ "$code" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
    fail "$*: stderr is not one line: $(cat "$tmp/err")"
  fi
}

small="--epochs 3,2 --steps-per-epoch 6 --batch-size 8 --seq-len 6 --hidden 8 --threads 1 --quiet"
for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14; do
  fault=
  [ "$i" -ge 09 ] && fault="--fault recompile-storm"
  # shellcheck disable=SC2086
  "$bin" train --mode mutable $small $fault --out "$tmp/c$i.jsonl" >/dev/null 2>&1 ||
    fail "train c$i failed"
  expect 0 "" history add --db "$db" --commit "c$i" --branch main --label job=small "$tmp/c$i.jsonl"
done
grep -q "recorded run 14: commit c14 \[job=small\], 2 phase(s)" "$tmp/out" ||
  fail "history add: $(cat "$tmp/out")"

expect 1 "" history check --db "$db" --json "$tmp/check.json"
cp "$tmp/out" "$tmp/check.md"
grep -q 'an unacknowledged regression' "$tmp/check.md" || fail "check: headline: $(head -1 "$tmp/check.md")"
grep -q '^\*\*Commit `c09`\*\*: .* a regression nobody acknowledged' "$tmp/check.md" ||
  fail "check names no change at c09: $(cat "$tmp/check.md")"
grep -Eq '^- \*\*regression\*\* in job=small: phase 1 jit_compiles: 1 -> 3' "$tmp/check.md" ||
  fail "check names no compiles at c09: $(cat "$tmp/check.md")"
grep -q 'with it: .*compiled' "$tmp/check.md" || fail "check names no cause: $(cat "$tmp/check.md")"
# The counts of commits 1-8 were the same: no count change before commit 9.
python3 - "$tmp/check.json" <<'PY' || fail "check --json: $(cat "$tmp/check.json")"
import json, sys
check = json.load(open(sys.argv[1]))
assert check["type"] == "history_check" and check["exit_code"] == 1 and check["runs"] == 14
counts = [c for c in check["changes"] if c["kind"] == "count"]
assert counts, "no count change"
assert all(c["commit"] == "c09" for c in counts), [c["commit"] for c in counts]
compiles = [c for c in counts if c["series"].endswith("jit_compiles")]
assert compiles and all(c["regression"] and c["after"] > c["before"] for c in compiles)
assert any(c["new_causes"] for c in compiles), "no cause came with the compiles"
PY

# An ack takes a change point off the gate; the check says so.
id=$(python3 -c 'import json,sys; print([c["id"] for c in json.load(open(sys.argv[1]))["changes"] if c["kind"] == "count"][0])' "$tmp/check.json")
expect 0 "" history ack --db "$db" "$id" --note "meant: the storm is the test's"
expect 1 "" history check --db "$db" --json -
python3 - "$tmp/out" "$id" <<'PY' || fail "check after ack: $(cat "$tmp/out")"
import json, sys
check = json.load(open(sys.argv[1]))
acked = [c for c in check["changes"] if c["id"] == sys.argv[2]]
assert len(acked) == 1 and acked[0]["acknowledged"], acked
PY
# --commit: the rest of commit 9's change points at once.
expect 0 "" history ack --db "$db" --commit c09 --note "the storm, every series of it"
grep -q "^acknowledged job=small: phase 2 jit_compiles@c09" "$tmp/out" || fail "ack --commit: $(cat "$tmp/out")"
"$bin" history check --db "$db" --json "$tmp/acked.json" >/dev/null 2>&1  # exit 1: noise elsewhere
python3 - "$tmp/acked.json" <<'PY' || fail "check after ack --commit: $(cat "$tmp/acked.json")"
import json, sys
changes = [c for c in json.load(open(sys.argv[1]))["changes"] if c["commit"] == "c09"]
assert changes and all(c["acknowledged"] for c in changes), changes
PY
"$bin" history check --db "$db" --since c10 --json "$tmp/since.json" >/dev/null 2>&1
[ $? -le 1 ] || fail "check --since c10 failed"  # 1 where the noise makes a step-time change
python3 -c 'import json,sys; c = json.load(open(sys.argv[1])); assert c["runs"] == 5 and not [x for x in c["changes"] if x["kind"] == "count"], c' \
  "$tmp/since.json" || fail "check --since c10: $(cat "$tmp/since.json")"

# The report: the page, its JSON, the runs at the change points.
expect 0 "" history report --db "$db" --out "$tmp/report"
grep -qi '^<!DOCTYPE html>' "$tmp/report/history.html" || fail "history report wrote no page"
grep -q 'c09' "$tmp/report/history.html" || fail "history report does not mark c09"
grep -q '<svg' "$tmp/report/history.html" || fail "history report draws no series"
[ -s "$tmp/report/runs/9.html" ] || fail "history report: no report of run 9 (c09): $(ls "$tmp/report/runs")"
grep -q 'runs/9.html' "$tmp/report/history.html" || fail "history report does not link run 9"

# Bad input: one line, exit 2, and the store as it was.
cp "$db" "$tmp/before.db"
expect 2 "commit c05 with labels job=small is recorded already" \
  history add --db "$db" --commit c05 --label job=small "$tmp/c05.jsonl"
printf '{"foo": 1}\n' >"$tmp/other.jsonl"
expect 2 'other.jsonl:1: no "type" field' history add --db "$db" --commit c15 "$tmp/other.jsonl"
expect 2 "nope.jsonl: cannot open run file" history add --db "$db" --commit c15 "$tmp/nope.jsonl"
expect 2 "--label must be KEY=VALUE" history add --db "$db" --commit c15 --label job "$tmp/c01.jsonl"
expect 2 "is acknowledged already" history ack --db "$db" "$id"
expect 2 "no change point job=small: phase 1 jit_compiles@c02" history ack --db "$db" "job=small: phase 1 jit_compiles@c02"
# The first commit starts no level, so no change point can be there, whatever the step times did
# (c03 could, under load: Otava found a step-time change point there twice under CTest -j2).
expect 2 "commit c01 has no change point to acknowledge" history ack --db "$db" --commit c01
expect 2 "needs a change point.s ID or --commit" history ack --db "$db"
expect 2 "no run of commit c99 is recorded" history check --db "$db" --since c99
expect 2 "nothing-here: .*no Apache Otava|cannot run nothing-here" \
  history check --db "$db" --python nothing-here
cmp -s "$db" "$tmp/before.db" || fail "a refused command changed the store"
printf 'notes, not a database, and long enough to tell so\n' >"$tmp/notes.db"
expect 2 "notes.db: not a history store" history check --db "$tmp/notes.db"
expect 2 "cannot reach the history store" history check --db postgresql://nobody@127.0.0.1:1/none
sqlite3 "$tmp/other.db" 'CREATE TABLE t (x)' || fail "sqlite3 failed"
expect 2 "not a recompdiag history store" history add --db "$tmp/other.db" --commit c1 "$tmp/c01.jsonl"
cp "$db" "$tmp/newer.db"
sqlite3 "$tmp/newer.db" "UPDATE recompdiag_meta SET value = '99' WHERE key = 'schema_version'"
expect 2 "schema version 99 is newer" history check --db "$tmp/newer.db"

# A process killed in the middle of its adds leaves every add it finished, and a store that opens.
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  "$bin" history add --db "$tmp/kill.db" --commit "k$i" "$tmp/c01.jsonl" >/dev/null 2>&1 || break
done &
adder=$!
sleep 0.3
kill -9 $adder 2>/dev/null
pkill -9 -f "kill.db" 2>/dev/null
wait $adder 2>/dev/null
if [ -e "$tmp/kill.db" ]; then
  n=$(sqlite3 "$tmp/kill.db" 'SELECT count(*) FROM runs' 2>/dev/null || echo 0)
  ph=$(sqlite3 "$tmp/kill.db" 'SELECT count(DISTINCT run_id) FROM phases' 2>/dev/null || echo 0)
  [ "$n" = "$ph" ] || fail "killed adds left $n runs but $ph with phases"
  expect 0 "" history add --db "$tmp/kill.db" --commit after-kill "$tmp/c01.jsonl"
fi

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "history_cli: every check passed"
