#!/bin/sh
# `recompdiag bench overhead` on a small config (issue 23): every arm has a row, LibTorch's
# profiler among them where this LibTorch has it, each ratio an interval and, when the rounds
# cannot tell, how many would; bad input is one line and exit 2. Shape only: no timing is judged.
set -u
bin=$1
. "$(dirname "$0")/check_lib.sh"

small="--batch-size 4 --seq-len 6 --hidden 8 --threads 1 --warmup 4"
# shellcheck disable=SC2086
"$bin" bench overhead $small --rounds 3 --block-steps 12 --sample-every 10 --json "$tmp/overhead.json" \
  >"$tmp/out" 2>"$tmp/err" || fail "bench overhead: exit $?: $(cat "$tmp/err")"
cat "$tmp/out"
# The same figures as JSON, in the shape every bench writes: which bench first, then each arm.
for key in '"bench": "overhead"' '"tool_version"' '"arms"' '"vs_off"' '"rounds_to_settle"' \
  '"default_monitor_vs_profiler"' '"comm_probe"'; do
  grep -q "$key" "$tmp/overhead.json" || fail "no $key in the --json file"
done
[ "$(grep -c '"name": ' "$tmp/overhead.json")" -eq \
  "$(grep -Ec '^(monitor off|all CPU probes|probes|LibTorch profiler \(CPU\))[ ,]' "$tmp/out")" ] ||
  fail "the --json file and the table have different arms"
for arm in 'monitor off' 'all CPU probes' 'probes, inputs 1/10, counted' \
  'probes, inputs 1/10, counted, RecordFunction' 'probes, dispatcher 1/10 (default)' 'LibTorch profiler (CPU)'; do
  grep -q "^$arm  " "$tmp/out" || fail "no row for '$arm'"
done
# The columns line up: each row's ms/step figure ends where the header's "ms/step" does.
awk '/^arm +ms\/step/ { end = index($0, "ms/step") + 6 }
  end && /^(monitor off|all CPU probes|probes|LibTorch profiler \(CPU\))[ ,]/ &&
  substr($0, end - 3, 5) !~ /^\.[0-9][0-9][0-9] $/ { bad = bad "\n" $0 }
  END { if (!end || bad != "") { print "misaligned rows:" bad; exit 1 } }' "$tmp/out" ||
  fail "the table's ms/step column does not line up"
# Every arm but the baseline: a ratio and a bracketed interval.
rows=$(grep -Ec '^(all CPU|probes|LibTorch profiler \(CPU\)).* \[[0-9.]+, [0-9.]+\]' "$tmp/out")
[ "$rows" -ge 4 ] || fail "$rows rows with an interval, expected at least 4"
grep -Eq '^default monitor / LibTorch profiler: +[0-9.]+ +\[' "$tmp/out" ||
  fail "no default monitor / profiler line"
grep -Eq '^LibTorch profiler, with(out)? Kineto.*: [0-9]+ events per step' "$tmp/out" ||
  fail "no profiler events line"
# Three rounds of tiny steps are rarely enough: where an interval includes 1.0 it says how many
# rounds would settle it, or that none would.
if grep -q 'includes 1.0' "$tmp/out"; then
  grep -q 'includes 1.0: the two cannot be told apart; \(~[0-9]* rounds would\|no round count would settle it\)' \
    "$tmp/out" || fail "an interval that includes 1.0 without the rounds that would settle it"
fi

# An output path that cannot be written is refused before the bench runs, not after it.
for bad in "--rounds 1" "--block-steps 2" "--block-steps 7" "--callgrind-arm nosuch" \
  "--json /nonexistent-recompdiag/overhead.json" "--json $tmp"; do
  # shellcheck disable=SC2086
  "$bin" bench overhead $small $bad >"$tmp/out" 2>"$tmp/err"
  code=$?
  [ "$code" -eq 2 ] || fail "bench overhead $bad: exit $code, expected 2"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^recompdiag: error: ' "$tmp/err" ||
    fail "bench overhead $bad: stderr is not one error line: $(cat "$tmp/err")"
  [ ! -s "$tmp/out" ] || fail "bench overhead $bad: ran before refusing it"
done

[ "$failures" -eq 0 ] && echo "bench_overhead_smoke: all checks passed"
[ "$failures" -eq 0 ]
