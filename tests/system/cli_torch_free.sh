#!/bin/sh
# The `recompdiag` front end without LibTorch (issue 23): it needs no libtorch or libc10, it runs
# every compare case of compare_cli_test.sh alone (copied where no recompdiag-trainer lies beside
# it), `ab` with two commands of its own runs and gates there, and it refuses a command that trains
# with one line and exit 2.
# Usage: cli_torch_free.sh RECOMPDIAG_FRONT_END FIXTURES_DIR
set -u
bin=$1
fx=$2
here=$(dirname "$0")
. "$(dirname "$0")/check_lib.sh"

# Its dynamic dependencies, as the loader resolves them.
if ! ldd "$bin" >"$tmp/ldd" 2>&1; then
  fail "ldd $bin: $(cat "$tmp/ldd")"
elif grep -Eq 'libtorch|libc10' "$tmp/ldd"; then
  fail "$bin loads LibTorch: $(grep -E 'libtorch|libc10' "$tmp/ldd" | tr '\n' ' ')"
fi

mkdir "$tmp/bin"
cp "$bin" "$tmp/bin/recompdiag"
alone=$tmp/bin/recompdiag
"$here/compare_cli_test.sh" "$alone" "$fx" || fail "compare_cli_test.sh with the front end alone"
"$here/report_cli_test.sh" "$alone" "$fx" || fail "report_cli_test.sh with the front end alone"
"$alone" bench compare --steps 2000 >"$tmp/out" 2>&1 || fail "bench compare: $(cat "$tmp/out")"
grep -q "total read + compare + render" "$tmp/out" || fail "bench compare printed: $(cat "$tmp/out")"
# Each round of a sweep in a fresh process, tabulated; --json - prints the result instead.
"$alone" bench compare --sweep 2000,3000 >"$tmp/out" 2>&1 ||
  fail "bench compare --sweep: $(cat "$tmp/out")"
[ "$(grep -Ec '^ +(2000|3000) +[0-9.]+ +[0-9.]+ ' "$tmp/out")" -eq 2 ] ||
  fail "bench compare --sweep printed: $(cat "$tmp/out")"
"$alone" bench compare --steps 2000 --json - >"$tmp/out" 2>&1 ||
  fail "bench compare --json -: $(cat "$tmp/out")"
grep -q '^{"bench":"compare","tool_version":"[^"]*",.*"steps":2000,' "$tmp/out" ||
  fail "bench compare --json - printed: $(cat "$tmp/out")"

# ab with the user's commands: the pair runs, is compared and gated here (a copied fixture per
# side: the slower one regresses, exit 1; the same on both sides of a bad flag, exit 2).
"$alone" ab --quiet --out-dir "$tmp/ab" --a-cmd "cp $fx/compare_baseline.jsonl {out}" \
  --b-cmd "cp $fx/compare_slower.jsonl {out}" --run-noise 1 >"$tmp/out" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "ab --a-cmd with a flag it does not take: exit $code, expected 2"
"$alone" ab --quiet --out-dir "$tmp/ab" --a-cmd "cp $fx/compare_baseline.jsonl {out}" \
  --b-cmd "cp $fx/compare_slower.jsonl {out}" --repeats 2 >"$tmp/out" 2>&1
code=$?
[ "$code" -eq 1 ] || fail "ab --a-cmd without recompdiag-trainer: exit $code, expected 1: $(cat "$tmp/out")"
[ -f "$tmp/ab/report.json" ] || fail "ab --a-cmd without recompdiag-trainer wrote no report"

"$alone" train --steps 3 >"$tmp/out" 2>"$tmp/err"
code=$?
[ "$code" -eq 2 ] || fail "train without recompdiag-trainer: exit $code, expected 2"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "train without recompdiag-trainer: stderr is not one line: $(cat "$tmp/err")"
grep -q '^recompdiag: error: `train` needs LibTorch' "$tmp/err" ||
  fail "train without recompdiag-trainer: $(cat "$tmp/err")"

[ "$failures" -eq 0 ] && echo "cli_torch_free: all checks passed"
[ "$failures" -eq 0 ]
