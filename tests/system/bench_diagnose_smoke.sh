#!/bin/sh
# `recompdiag bench diagnose --seeds 1` on a small config: every CPU fault against its healthy
# twin, then the JSON must hold one entry per fault with the issue's keys, and the healthy block.
set -eu
bin=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir"
"$bin" bench diagnose --epochs 4,3 --steps-per-epoch 5 --batch-size 8 --seq-len 10 --hidden 16 \
  --threads 1 --seeds 1 --quality-seeds 1 --out-dir "$dir/runs" --json "$dir/diagnose.json" > "$dir/table.txt"
cat "$dir/table.txt"
grep -q '^correct: [0-9]* of 6$' "$dir/table.txt"
json=$dir/diagnose.json
for key in '"faults"' '"name"' '"correct"' '"expected"' '"top_cause"' '"alerts"' \
  '"time_ratio"' '"convergence"' '"healthy"' '"pairs"' '"regression_verdicts"' \
  '"alerts_per_1000_steps"'; do
  grep -q "$key" "$json" || { echo "missing $key in $json"; exit 1; }
done
for fault in recompile-storm fresh-optimizer lr-trap host-sync deopt leak; do
  grep -q "\"name\": \"$fault\"" "$json" || { echo "no entry for $fault"; exit 1; }
done
# The faults whose alert and cause the CPU run can show on this small config have them (counts,
# not timing: whether the time verdict is proven on 35 steps depends on the machine's noise).
for fault in recompile-storm host-sync deopt; do
  grep -q "^$fault " "$dir/table.txt" || { echo "no row for $fault"; exit 1; }
  if awk -v f="$fault" '$1 == f { getline; print; exit }' "$dir/table.txt" |
    grep -Eq 'did not fire|top cause is not'; then
    echo "$fault not diagnosed"
    exit 1
  fi
done
# A --json path that cannot be written is one error line and exit 2 before any run starts.
set +e
"$bin" bench diagnose --seeds 1 --json /nonexistent-recompdiag/diagnose.json >"$dir/bad.out" 2>"$dir/bad.err"
code=$?
set -e
[ "$code" -eq 2 ] || { echo "bench diagnose with an unwritable --json: exit $code, expected 2"; exit 1; }
[ "$(wc -l <"$dir/bad.err")" -eq 1 ] && grep -q "^recompdiag: error: --json: cannot write" "$dir/bad.err" ||
  { echo "bench diagnose with an unwritable --json: $(cat "$dir/bad.err")"; exit 1; }
[ ! -s "$dir/bad.out" ] || { echo "bench diagnose ran despite its bad --json"; exit 1; }
echo "bench_diagnose_smoke: an unwritable --json is refused before the run"
